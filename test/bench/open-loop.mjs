// An open-loop load for the API bench (not a benchmark itself: run-all.mjs only runs *.bench.mjs).
// Each session fires on its own timer whether or not its last answer came back, as agents' status
// lines do: a closed loop (autocannon) waits for each answer and so hides a stalled server.
import { request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `sessions` clients, each posting `bodyOf(session, n)` to `path` every `intervalMs` for
 * `durationMs`, their first posts spread evenly over one interval. Each post is one short connection,
 * as a hook process makes: 400 kept-alive sessions would be over the loopback port's deliberate
 * 128-connection limit (daemon/http/listeners.ts), while short ones stay far under it unless the
 * server stalls (then they pile up and the excess is refused: an error, as a user would see it).
 * Latency is from the request's start to the answer's end. Resolves once every request settled, with
 * the whole run's latencies and, apart, those of the requests started `steadyAfterMs` or later
 * (`onSteady` is called then, for the caller to mark the server's CPU).
 */
export async function openLoop({
  port,
  path,
  headers = {},
  sessions,
  intervalMs,
  durationMs,
  bodyOf,
  expect = () => true,
  steadyAfterMs = Infinity,
  onSteady = () => {},
}) {
  const latencies = [];
  // Requests started once every session has posted for a while: what a user with that many running sessions feels.
  const steadyLatencies = [];
  const began = performance.now();
  const steadyTimer = setTimeout(onSteady, steadyAfterMs);
  let errors = 0;
  const errorKinds = new Map();
  const fail = (kind) => {
    errors += 1;
    errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
  };
  const inFlight = new Set();
  // The generator's own loop delay: a late timer is the generator's lag, not the server's.
  const ownDelay = monitorEventLoopDelay({ resolution: 10 });
  ownDelay.enable();
  const post = (payload) =>
    new Promise((resolve) => {
      const start = performance.now();
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path,
          agent: false,
          headers: { host: `127.0.0.1:${port}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const latency = performance.now() - start;
            latencies.push(latency);
            if (start - began >= steadyAfterMs) steadyLatencies.push(latency);
            if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}`);
            else {
              const text = Buffer.concat(chunks).toString('utf8');
              if (!expect(text)) fail(`unexpected answer ${/"code":"([a-z_]+)"/.exec(text)?.[1] ?? text.slice(0, 80)}`);
            }
            resolve();
          });
          res.on('error', (error) => (fail(error.code ?? error.message), resolve()));
        },
      );
      req.on('error', (error) => (fail(error.code ?? error.message), resolve()));
      req.end(payload);
    });
  const sessionDone = [];
  for (let session = 0; session < sessions; session += 1) {
    sessionDone.push(
      new Promise((resolve) => {
        let n = 0;
        const fire = () => {
          const sent = post(JSON.stringify(bodyOf(session, n)));
          n += 1;
          inFlight.add(sent);
          void sent.then(() => inFlight.delete(sent));
        };
        const offset = (session * intervalMs) / sessions;
        setTimeout(() => {
          fire();
          const timer = setInterval(fire, intervalMs);
          setTimeout(() => (clearInterval(timer), resolve()), durationMs);
        }, offset);
      }),
    );
  }
  await Promise.all(sessionDone);
  await Promise.all([...inFlight]);
  clearTimeout(steadyTimer);
  ownDelay.disable();
  return {
    ...quantiles(latencies),
    steady: quantiles(steadyLatencies),
    errors,
    errorKinds: Object.fromEntries(errorKinds),
    generatorDelayP99Ms: ownDelay.percentile(99) / 1e6,
  };
}

function quantiles(latencies) {
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { requests: latencies.length, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? NaN };
}
