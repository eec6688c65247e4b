// Whether dist/ was built from the sources as they are now: `npm run build` (~40 s) ends by writing a
// hash of every input into dist/.build-stamp; `node scripts/build-stamp.mjs ensure` builds only when
// that hash differs (or dist/ is missing), so `npm start`, `test:unit` and `demo` start at once on a
// current dist/. `npm test` and `npm run check` (CI) still build from clean every time.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const STAMP = join('dist', '.build-stamp');
const PENDING = `${STAMP}.pending`;
const INPUT_DIRS = ['protocol', 'schemas', 'adapters', 'daemon', 'scripts'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json'];
// Written by the build itself (scripts/emit-validators.mjs): an output, not an input.
const OUTPUTS = new Set(['daemon/generated/validators.js']);

function* files(root, dir) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) yield* files(root, path);
    else if (entry.isFile() && !OUTPUTS.has(path)) yield path;
  }
}

/** sha256 over every input's path and bytes, in a stable order. */
export function sourceHash(root) {
  const hash = createHash('sha256');
  const paths = [...INPUT_FILES.filter((file) => existsSync(join(root, file))), ...INPUT_DIRS.flatMap((dir) => [...files(root, dir)])].sort();
  for (const path of paths)
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(root, path)))
      .update('\0');
  return hash.digest('hex');
}

export function isCurrent(root) {
  const stamp = join(root, STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === sourceHash(root);
}

/** Hashes the sources as the build starts (an edit made while it runs must leave dist/ stale), kept until it ends. */
export function beginStamp(root) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, PENDING), `${sourceHash(root)}\n`);
}

/** The build finished: what it was built from becomes the stamp. */
export function writeStamp(root) {
  renameSync(join(root, PENDING), join(root, STAMP));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const mode = process.argv[2];
  if (mode === 'begin') beginStamp(root);
  else if (mode === 'write') writeStamp(root);
  else if (mode === 'ensure') {
    if (isCurrent(root)) console.error(`dist/ is current (${relative(process.cwd(), join(root, STAMP)) || STAMP}); not rebuilding`);
    else {
      const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
      process.exitCode = built.status ?? 1;
    }
  } else {
    console.error('usage: node scripts/build-stamp.mjs begin|write|ensure');
    process.exitCode = 64;
  }
}
