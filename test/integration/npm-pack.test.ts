import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../daemon/node-flags.js';
import { exited, until } from '../support/daemon.js';
import { processFacts } from '../support/proc.js';
import { tempDir, tempRepo } from '../support/git.js';

/**
 * The package as a user gets it: `npm pack`, installed into a fresh prefix, run from there. Anything
 * the CLI, the daemon or the dashboard needs at run time and `files` in package.json leaves out fails
 * here. Dependencies come from the npm cache `npm ci` filled: `--offline` first; when the cache lacks
 * a package's metadata (`npm ci` fetches tarballs, not always the metadata an install resolves with),
 * `--prefer-offline` takes what the cache has and only the rest from the registry.
 */

const ROOT = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const INSTALL_TIMEOUT_MS = 90_000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, encoding: 'utf8', timeout: options.timeoutMs ?? 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

let handoff = '';
let installed = '';

beforeAll(
  async () => {
    const work = tempDir('pack');
    const started = Date.now();
    // The test run has built dist/ already; `prepack` would rebuild it under the suites running beside this one.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--json', '--loglevel=error'], {
      cwd: ROOT,
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    const tarball = join(work, filename);
    const prefix = join(work, 'prefix');
    const install = (mode: '--offline' | '--prefer-offline') =>
      run('npm', ['install', '--global', '--prefix', prefix, tarball, mode, '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: work,
        timeoutMs: INSTALL_TIMEOUT_MS,
      });
    let mode: '--offline' | '--prefer-offline' = '--offline';
    let result = await install(mode);
    if (result.code !== 0 && /ENOTCACHED/.test(result.stderr)) result = await install((mode = '--prefer-offline'));
    expect(result.code, result.stderr).toBe(0);
    handoff = join(prefix, 'bin', 'handoff');
    installed = join(prefix, 'lib', 'node_modules', pkg.name);
    console.log(
      `npm pack: ${files.length} files, ${(readFileSync(tarball).length / 1024).toFixed(0)} KiB; installed with ${mode} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  },
  INSTALL_TIMEOUT_MS * 2 + 10_000,
);

describe('the npm package, installed into a fresh prefix', () => {
  it('`handoff --version` runs the installed copy and prints the package version', async () => {
    expect(realpathSync(handoff)).toBe(join(installed, 'dist', 'bin', 'handoff.js'));
    const version = await run(handoff, ['--version']);
    expect([version.code, version.stdout]).toEqual([0, `${pkg.version}\n`]);
    // Only the built code, the JSON schemas (the published contract) and the docs: no sources or tests travel.
    expect(existsSync(join(installed, 'test'))).toBe(false);
    // Every docs page an answer's hint names is there to read, in the package as in the repository.
    const cited = new Set([...readTree(join(installed, 'dist')).matchAll(/docs\/([a-z0-9-]+\.md)/g)].map((m) => m[1] ?? ''));
    expect(cited.size).toBeGreaterThan(0);
    for (const page of cited) expect([page, existsSync(join(installed, 'docs', page))]).toEqual([page, true]);
    expect(existsSync(join(installed, 'daemon'))).toBe(false);
    // No source maps (their sources do not travel), and TypeBox, which only builds the schemas, stays behind: the daemon below runs without it.
    expect(readdirSync(join(installed, 'dist'), { recursive: true }).filter((path) => String(path).endsWith('.map'))).toEqual([]);
    expect(existsSync(join(installed, 'node_modules', '@sinclair', 'typebox'))).toBe(false);
    expect(readdirSync(join(installed, 'schemas')).sort()).toEqual(
      readdirSync(join(ROOT, 'schemas'))
        .filter((f) => f.endsWith('.json'))
        .sort(),
    );
  });

  describe('its daemon', () => {
    const stateDir = tempDir('state');
    const repo = tempRepo();
    let daemon: ReturnType<typeof spawn> | null = null;
    const cli = (...args: string[]) => run(handoff, ['--state-dir', stateDir, ...args], { cwd: repo });

    afterAll(async () => {
      if (daemon !== null && daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        await exited(daemon);
      }
    });

    it('`handoff daemon` starts, `handoff status` answers, and the dashboard page and its assets are served through the one-time link', async () => {
      daemon = spawn(handoff, ['daemon', '--state-dir', stateDir], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      daemon.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const info = await until(
        'daemon.json',
        async () => {
          if (daemon?.exitCode !== null) throw new Error(`the installed daemon exited: ${stderr}`);
          const path = join(stateDir, 'daemon.json');
          return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { pid: number; port: number }) : undefined;
        },
        30_000,
      );
      // The installed `handoff daemon` started node again with the daemon's V8 flags: the daemon is its child.
      expect(processFacts(info.pid)).toMatchObject({ ppid: daemon.pid, argv: expect.arrayContaining([...DAEMON_NODE_FLAGS]) as unknown });

      const status = await cli('status', '--json');
      expect([status.code, (JSON.parse(status.stdout) as { code: string }).code]).toEqual([0, 'status']);

      const open = await cli('open', '--no-browser', '--json');
      const url = new URL((JSON.parse(open.stdout) as { data: { url: string } }).data.url);
      const login = await get(info.port, `${url.pathname}${url.search}`);
      expect(login.status).toBe(200);
      const cookie = String(login.headers['set-cookie']?.[0]).split(';')[0] ?? '';
      const page = await get(info.port, '/dashboard/', cookie);
      expect([page.status, page.headers['content-type']]).toEqual([200, expect.stringMatching(/^text\/html/)]);
      const assets = [...page.text.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1] ?? '');
      expect(assets.length).toBeGreaterThan(0);
      console.log(`npm pack: the installed dashboard served its page and ${assets.length} assets`);
      for (const asset of assets) expect([asset, (await get(info.port, asset, cookie)).status]).toEqual([asset, 200]);

      const stop = await cli('daemon', 'stop', '--json');
      expect([stop.code, (JSON.parse(stop.stdout) as { code: string }).code]).toEqual([0, 'daemon_stopping']);
      expect(await exited(daemon)).toBe(0);
    }, 60_000);
  });
});

describe('npm pack from a fresh clone (no dist/ yet)', () => {
  it(
    'builds first (prepack): the tarball holds the built CLI its `handoff` bin points at',
    async () => {
      const clone = join(tempDir('clone'), 'p');
      const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
      for (const path of listed.stdout.split('\0').filter((p) => p !== '' && existsSync(join(ROOT, p)))) {
        mkdirSync(dirname(join(clone, path)), { recursive: true });
        copyFileSync(join(ROOT, path), join(clone, path));
      }
      // The clone's `npm ci` would install these same packages; linking them keeps the test off the registry.
      symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
      expect(existsSync(join(clone, 'dist'))).toBe(false);
      const packed = await run('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: clone, timeoutMs: INSTALL_TIMEOUT_MS });
      expect(packed.code, packed.stderr).toBe(0);
      const [{ files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ files: { path: string }[] }];
      const bin = (JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')) as { bin: { handoff: string } }).bin.handoff;
      expect(files.map((f) => f.path)).toContain(bin);
    },
    INSTALL_TIMEOUT_MS,
  );
});

/** Every .js file under `dir`, concatenated. */
function readTree(dir: string): string {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

function get(port: number, path: string, cookie?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, ...(cookie === undefined ? {} : { cookie }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}
