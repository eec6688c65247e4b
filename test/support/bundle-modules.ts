import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownPackage } from '../../daemon/package-root.js';

const { root } = ownPackage();

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

/** node's arguments that make a process print every file it loads (see `loadedFiles`); writes a preload script into `dir`. */
export function tracingArgs(dir: string): string[] {
  const preload = join(dir, 'requires.cjs');
  writeFileSync(preload, REQUIRES);
  return ['--require', preload, '--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`];
}

/** From a traced process's stdout, what it loaded, relative to the package root: ES modules, then CommonJS files as `cjs:<path>`. */
export function loadedFiles(stdout: string): { readonly modules: string[]; readonly commonjs: string[] } {
  const lines = stdout.split('\n');
  return {
    modules: lines.filter((line) => line.startsWith('file:')).map((url) => relative(root, fileURLToPath(url))),
    commonjs: lines.filter((line) => line.startsWith('cjs:')).map((line) => `cjs:${relative(root, line.slice('cjs:'.length))}`),
  };
}

/** Which sources each file of the bundle holds, as scripts/bundle.mjs wrote it from esbuild's metafile. */
export function bundleContents(): Readonly<Record<string, readonly string[]>> {
  return JSON.parse(readFileSync(join(root, 'dist', 'bin', 'contents.json'), 'utf8')) as Record<string, string[]>;
}

/** The sources the given files of the bundle hold. */
export function sourcesOf(files: readonly string[]): string[] {
  const contents = bundleContents();
  return files.flatMap((file) => contents[file] ?? []);
}
