// Each module's share of an idle daemon's memory: the daemon's modules imported one after another into
// one bare node (with the daemon's V8 flags and --expose-gc), the heap and RSS measured after a full GC
// at each step. Shares depend on the order (a module's dependencies are counted where they are first
// loaded), so the order is the daemon's own: libraries first, then its layers. The same run prints a
// bare node and a bare fastify hello server as the floors. Figures only, no target (the footprint bench
// holds the RSS targets); the secret scanner and LFS are measured last: an idle daemon does not load them.
//
// Usage: node test/bench/daemon-modules.bench.mjs
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createReport, DAEMON_NODE_FLAGS, machine, requireBuild } from './lib.mjs';

requireBuild();

const dist = (path) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));
const STEPS = [
  ['fastify', 'fastify'],
  ['pino', 'pino'],
  ['xstate', 'xstate'],
  ['chokidar', 'chokidar'],
  ['simple-git', 'simple-git'],
  ['commander (the CLI that runs `handoff daemon`)', 'commander'],
  ['generated ajv validators', dist('daemon/generated/validators.js')],
  ['protocol/ (the pure core)', dist('protocol/index.js')],
  ['daemon/store, config, logger', dist('daemon/store/index.js')],
  ['daemon/git/', dist('daemon/git/index.js')],
  ['daemon/ingest/ (tails, adapters)', dist('daemon/ingest/index.js')],
  ['daemon/evacuation/ (drain runner)', dist('daemon/evacuation/index.js')],
  ['daemon/takeover/', dist('daemon/takeover/index.js')],
  ['daemon/http/ (routes, security)', dist('daemon/http/index.js')],
  ['daemon/http/dashboard/', dist('daemon/http/dashboard/index.js')],
  ['the rest of the daemon (compose-daemon, main)', dist('daemon/main.js')],
  ['— not loaded idle: secret scanner (secretlint)', dist('daemon/evacuation/secret-scan.js')],
  ['— not loaded idle: OpenAPI document', dist('daemon/http/openapi.js')],
];

const CHILD = `
const steps = JSON.parse(process.argv[1]);
const measure = () => { gc(); gc(); const m = process.memoryUsage(); return { rss: m.rss, heap: m.heapUsed }; };
const out = [{ what: 'bare node', ...measure() }];
for (const [what, spec] of steps) { await import(spec); await new Promise((r) => setTimeout(r, 50)); out.push({ what, ...measure() }); }
process.stdout.write(JSON.stringify(out));
`;
const HELLO = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/hello', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: 0 });
gc(); gc();
process.stdout.write(JSON.stringify({ rss: process.memoryUsage().rss }));
await app.close();
`;

const report = createReport('daemon-modules');
console.log(`# daemon-modules bench · ${machine()} · V8 flags: ${DAEMON_NODE_FLAGS.join(' ') || 'none'}`);
const run = (code, args = []) =>
  JSON.parse(
    execFileSync(process.execPath, [...DAEMON_NODE_FLAGS, '--expose-gc', '--input-type=module', '-e', code, ...args], {
      encoding: 'utf8',
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    }),
  );
const mb = (bytes) => (bytes / 1048576).toFixed(1);
const rows = run(CHILD, [JSON.stringify(STEPS)]);
const hello = run(HELLO);
report.figure(
  `daemon-modules floor: bare node ${mb(rows[0].rss)} MB RSS (heap ${mb(rows[0].heap)} MB); bare fastify hello server listening ${mb(hello.rss)} MB RSS`,
);
for (let i = 1; i < rows.length; i += 1) {
  const row = rows[i];
  const before = rows[i - 1];
  report.figure(`daemon-modules + ${row.what}: +${mb(row.heap - before.heap)} MB heap, +${mb(row.rss - before.rss)} MB RSS (RSS ${mb(row.rss)} MB)`);
}
report.summary();
