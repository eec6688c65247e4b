import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';

/**
 * A password over the whole printable range (' " space / ? # @ : % included) and a query token, in
 * `remote.origin.url`, `remote.origin.pushurl` or a `url.<base>.insteadOf` rewrite: after a real
 * evacuation — pushed through a rewrite to a local bare remote, or blocked on an unreachable one —
 * neither appears in any artifact: the package, the state dir (journal, log), `handoff status`, the
 * dashboard's API, the daemon's own output, or any object on the remote.
 * Each run is a real evacuation: HANDOFF_CREDENTIAL_RUNS sets how many (10 by default, 40 with SOAK=1).
 */
const RUNS = Number(process.env['HANDOFF_CREDENTIAL_RUNS'] ?? (process.env['SOAK'] === '1' ? 40 : 10));
let daemon: DaemonProcess;
let cookie = '';

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path);
    return entry.isFile() ? [path] : [];
  });
}

function page(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const host = `127.0.0.1:${daemon.port}`;
    const req = request(
      { host: '127.0.0.1', port: daemon.port, path, setHost: false, headers: { host, cookie, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (res.headers['set-cookie']?.[0]) cookie = res.headers['set-cookie'][0].split(';')[0] ?? '';
          resolve(Buffer.concat(chunks).toString('utf8'));
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const stateDir = tempDir('state');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ git_timeout_seconds: 5 }));
  daemon = await startDaemon(stateDir);
  const open = await cli(daemon.stateDir, ['open', '--no-browser', '--json'], tempDir('cwd'));
  const url = new URL(String(open.json.data?.['url']));
  await page(`${url.pathname}${url.search}`);
  expect(cookie).toMatch(/=/);
});
afterAll(async () => {
  await daemon.stop();
});

type Form = 'url' | 'pushurl' | 'insteadOf' | 'unreachable';

/** A bare remote and a checkout whose origin carries the secrets in `form`. */
function repository(form: Form, password: string, token: string): { root: string; bare: string } {
  const base = tempDir('cred');
  const bare = join(base, 'remote.git');
  const root = join(base, 'work');
  git(base, 'init', '-q', '--bare', '-b', 'main', bare);
  git(base, 'init', '-q', '-b', 'main', root);
  writeFileSync(join(root, 'f.txt'), 'one\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'init');
  git(root, 'push', '-q', bare, 'main');
  const credentials = `user:${encodeURIComponent(password)}`;
  const query = `?access_token=${encodeURIComponent(token)}`;
  const rewritten = `https://${credentials}@example.invalid/o/r.git${query}`;
  if (form === 'url') {
    git(root, 'remote', 'add', 'origin', rewritten);
    git(root, 'config', `url.${bare}.insteadOf`, rewritten);
  } else if (form === 'pushurl') {
    git(root, 'remote', 'add', 'origin', bare);
    git(root, 'config', 'remote.origin.pushurl', rewritten);
    git(root, 'config', `url.${bare}.insteadOf`, rewritten);
  } else if (form === 'insteadOf') {
    git(root, 'remote', 'add', 'origin', 'corp:o/r.git');
    git(root, 'config', `url.https://${credentials}@127.0.0.1:9/${query}&path=.insteadOf`, 'corp:');
  } else {
    git(root, 'remote', 'add', 'origin', `https://${credentials}@127.0.0.1:9/o/r.git${query}`);
  }
  writeFileSync(join(root, 'f.txt'), 'one\ntwo\n');
  return { root, bare };
}

// Each secret opens and closes with a random marker, so a leak of either end is caught too.
// '~' appears in no base64 or hex id the daemon writes, and encodeURIComponent keeps it.
const marker = fc.stringMatching(/^[A-Z]{8}$/).map((letters) => `~${letters}~`);
const printable = fc.string({ unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))), minLength: 4, maxLength: 24 });
const secret = fc.tuple(marker, printable, marker).map(([open, middle, close]) => ({ value: `${open}${middle}${close}`, open, close }));

describe('credentials never leave the remote configuration', () => {
  it(
    `in ${RUNS} real evacuations, no password or query token reaches an artifact, a log, status, the dashboard or the remote`,
    async () => {
      const outcomes: Record<string, number> = {};
      await fc.assert(
        fc.asyncProperty(secret, secret, fc.constantFrom<Form>('url', 'pushurl', 'insteadOf', 'unreachable'), async (password, token, form) => {
          const { root, bare } = repository(form, password.value, token.value);
          const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
          outcomes[`${form}: ${now.json.code}`] = (outcomes[`${form}: ${now.json.code}`] ?? 0) + 1;
          if (form === 'url' || form === 'pushurl') expect(now.json.code).toBe('handoff_ready');
          const status = await cli(daemon.stateDir, ['status', '--json'], root);
          const cycle = (status.json.data?.['cycle'] as { id?: string } | null)?.id ?? '';
          const artifacts: [string, string][] = [
            ['handoff now', now.stdout + now.stderr],
            ['handoff status', status.stdout + status.stderr],
            ['handoff status (human)', (await cli(daemon.stateDir, ['status'], root)).stdout],
            ['dashboard overview', await page('/dashboard/api/overview')],
            ['dashboard cycle', await page(`/dashboard/api/cycle?workspace=${encodeURIComponent(root)}&cycle=${cycle}`)],
            ['daemon output', daemon.stderr()],
            [
              'remote objects',
              execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: bare, maxBuffer: 256 * 1024 * 1024 }).toString('latin1'),
            ],
            ...walk(join(root, '.session-handoff')).map((path): [string, string] => [path, readFileSync(path, 'latin1')]),
            ...walk(daemon.stateDir)
              .filter((path) => statSync(path).size < 64 * 1024 * 1024)
              .map((path): [string, string] => [path, readFileSync(path, 'latin1')]),
          ];
          for (const s of [password, token]) {
            for (const shown of [s.value, encodeURIComponent(s.value), s.open, s.close]) {
              for (const [where, text] of artifacts) expect(text.includes(shown), `${shown} in ${where} (${form})`).toBe(false);
            }
          }
        }),
        { numRuns: RUNS },
      );
      console.log(`credential runs: ${JSON.stringify(outcomes)}`);
    },
    60_000 + RUNS * 20_000,
  );
});
