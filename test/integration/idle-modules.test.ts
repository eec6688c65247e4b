import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownPackage } from '../../daemon/package-root.js';
import { tempDir } from '../support/git.js';

const { root, cli } = ownPackage();

// Module hooks run on their own thread in Node 20: each loaded URL is written straight to stdout.
const HOOKS = `import { writeSync } from 'node:fs';
export async function load(url, context, next) { writeSync(1, url + '\\n'); return next(url, context); }`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;
// require() does not pass the module hooks: a preloaded script writes each CommonJS file loaded, as `cjs:<path>`.
const REQUIRES = `const Module = require('node:module'); const { writeSync } = require('node:fs');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  if (!Module.isBuiltin(request)) writeSync(1, 'cjs:' + Module._resolveFilename(request, parent, isMain) + '\\n');
  return loaded;
};`;

/** What an idle `handoff daemon` has loaded once it listens, relative to the package root: ES modules, and CommonJS files as `cjs:<path>`. */
async function filesOfAnIdleDaemon(): Promise<string[]> {
  const base = tempDir('idle-modules');
  const stateDir = join(base, 'state');
  mkdirSync(stateDir, { mode: 0o700 });
  const preload = join(base, 'requires.cjs');
  writeFileSync(preload, REQUIRES);
  const hooks = ['--require', preload, '--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`];
  const child = spawn(process.execPath, [...hooks, cli, 'daemon', '--state-dir', stateDir, '--port', '0'], {
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
  const lines = out.split('\n');
  return [
    ...lines.filter((line) => line.startsWith('file:')).map((url) => relative(root, fileURLToPath(url))),
    ...lines.filter((line) => line.startsWith('cjs:')).map((line) => `cjs:${relative(root, line.slice('cjs:'.length))}`),
  ];
}

describe('what an idle daemon loads (docs/performance/daemon.md)', () => {
  it('holds the API and the tails, but not the secret scanner: secretlint is loaded by the first scan', async () => {
    // Which sources each file of the bundle holds, as scripts/bundle.mjs wrote it from esbuild's metafile.
    const contents = JSON.parse(readFileSync(join(root, 'dist', 'bin', 'contents.json'), 'utf8')) as Record<string, string[]>;
    const sourcesOf = (files: readonly string[]) => files.flatMap((file) => contents[file] ?? []);
    const isScanner = (source: string) => source.includes('node_modules/@secretlint/') || source === 'dist/daemon/evacuation/secret-scan.js';

    const files = await filesOfAnIdleDaemon();
    const modules = files.filter((file) => !file.startsWith('cjs:'));
    expect(modules[0]).toBe(relative(root, cli));
    // Every ES module the daemon runs is a file of the bundle: none of tsc's output, none of node_modules.
    expect(modules.filter((file) => !(file in contents))).toEqual([]);
    // Of CommonJS, only the runtime helpers the precompiled validators name (scripts/emit-validators.mjs); never
    // what the bundle leaves out as unused (scripts/bundle.mjs: fastify's own compilers, light-my-request).
    expect(files.filter((file) => file.startsWith('cjs:')).sort()).toEqual([
      'cjs:node_modules/ajv-formats/dist/formats.js',
      'cjs:node_modules/ajv/dist/runtime/ucs2length.js',
    ]);
    const sources = sourcesOf(modules);
    expect(sources).toContain('dist/daemon/http/build-server.js');
    expect(sources).toContain('dist/daemon/ingest/codex-watch.js');
    expect(sources.filter(isScanner)).toEqual([]);
    // The scanner is in the bundle, in files of its own that the idle daemon has not loaded.
    expect(sourcesOf(Object.keys(contents)).filter(isScanner).length).toBeGreaterThan(10);
  });
});
