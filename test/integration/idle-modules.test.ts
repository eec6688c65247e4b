import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../daemon/node-flags.js';
import { ownPackage } from '../../daemon/package-root.js';
import { bundleContents, loadedFiles, sourcesOf, tracingArgs } from '../support/bundle-modules.js';
import { tempDir } from '../support/git.js';

const { root, cli } = ownPackage();

/** What an idle `handoff daemon` has loaded once it listens (the traced process's stdout). */
async function outputOfAnIdleDaemon(): Promise<string> {
  const base = tempDir('idle-modules');
  const stateDir = join(base, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  // The daemon's flags given: one traced process, the daemon (without them it starts node again, daemon/cli/relaunch.ts).
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, ...tracingArgs(base), cli, 'daemon', '--state-dir', stateDir, '--port', '0'], {
    env: { ...process.env, CODEX_HOME: join(base, 'no-codex-home') },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    while (!existsSync(join(stateDir, 'daemon.json'))) {
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}`);
      await sleep(20);
    }
    // What the first moments after the start import (the tails' first scans) counts as idle too.
    await sleep(300);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(base, { recursive: true, force: true });
  }
  return out;
}

describe('what an idle daemon loads (docs/performance/daemon.md)', () => {
  it('holds the API and the tails, but not the secret scanner: secretlint is loaded by the first scan', async () => {
    const contents = bundleContents();
    const isScanner = (source: string) => source.includes('node_modules/@secretlint/') || source === 'dist/daemon/evacuation/secret-scan.js';

    const { modules, commonjs } = loadedFiles(await outputOfAnIdleDaemon());
    expect(modules[0]).toBe(relative(root, cli));
    // Every ES module the daemon runs is a file of the bundle: none of tsc's output, none of node_modules.
    expect(modules.filter((file) => !(file in contents))).toEqual([]);
    // Of CommonJS, only the runtime helpers the precompiled validators name (scripts/emit-validators.mjs); never
    // what the bundle leaves out as unused (scripts/bundle.mjs: fastify's own compilers, light-my-request).
    expect(commonjs.sort()).toEqual(['cjs:node_modules/ajv-formats/dist/formats.js', 'cjs:node_modules/ajv/dist/runtime/ucs2length.js']);
    const sources = sourcesOf(modules);
    expect(sources).toContain('dist/daemon/http/build-server.js');
    expect(sources).toContain('dist/daemon/ingest/codex-watch.js');
    expect(sources.filter(isScanner)).toEqual([]);
    // The scanner is in the bundle, in files of its own that the idle daemon has not loaded.
    expect(sourcesOf(Object.keys(contents)).filter(isScanner).length).toBeGreaterThan(10);
  });
});
