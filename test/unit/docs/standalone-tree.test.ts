import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** This file names the shapes it looks for. */
const SELF = 'test/unit/docs/standalone-tree.test.ts';
/** Stryker's record of the mutated sources and their tests (issue 37): copies of files checked here themselves, held as data. */
const MUTATION_RECORD = 'test/mutation/stryker-incremental.json';
/** Compiled into dist/ (tsconfig's include): their module URLs resolve from the built file's place. */
const COMPILED = ['protocol/', 'schemas/', 'adapters/', 'daemon/'];

/** Every file a clone holds (tracked, or new and not ignored): what a contributor's clone will have. */
function cloneFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return out
    .split('\0')
    .filter((path) => path !== '' && !path.startsWith('test/fixtures/') && path !== SELF && path !== MUTATION_RECORD)
    .filter((path) => /\.(ts|mts|mjs|cjs|js|json|md|sh|ya?ml)$/.test(path) || path === '.ci/run' || path.startsWith('scripts/'));
}

const SIBLING = /(?:\.\.\/)+shared\b|\/work\/shared\b|\bshared\/(?:fixtures|reference|hooks|DESIGN\.md|CONTRACT\.md)/;

/**
 * The relative paths a file resolves from its own place: module URLs, `import.meta.dirname` joins and
 * Markdown links. (Other `../` strings are data: hostile paths the tests send, eslint import patterns.)
 */
function relativePaths(file: string, text: string): string[] {
  if (file.endsWith('.md')) return [...text.matchAll(/\]\((\.{1,2}\/[^)\s#]*)/g)].map((m) => m[1] ?? '');
  const urls = [...text.matchAll(/new URL\(\s*['"`](\.{1,2}\/[^'"`]*)['"`]\s*,\s*import\.meta\.url/g)].map((m) => m[1] ?? '');
  const joins = [...text.matchAll(/join\(import\.meta\.dirname((?:\s*,\s*'[^']*')+)\)/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/'([^']*)'/g)].map((part) => part[1]).join('/'),
  );
  return [...urls, ...joins];
}

/** A path that leaves the repository when resolved from the file that names it (a compiled one from dist/). */
function escapes(file: string, path: string): boolean {
  const from = COMPILED.some((dir) => file.startsWith(dir)) && file.endsWith('.ts') ? join('dist', dirname(file)) : dirname(file);
  const target = resolve(ROOT, from, path);
  const rel = relative(ROOT, target);
  return rel === '..' || rel.startsWith(`..${sep}`);
}

describe('the repository stands alone (a clone with nothing beside it passes its tests)', () => {
  const files = cloneFiles();

  it('no source, test, bench, script or document names the sibling shared/ folder', () => {
    const hits = files.filter((file) => SIBLING.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(hits).toEqual([]);
  });

  it('no file reaches a path above the repository root', () => {
    const hits = files.flatMap((file) =>
      relativePaths(file, readFileSync(join(ROOT, file), 'utf8'))
        .filter((path) => escapes(file, path))
        .map((path) => `${file}: ${path}`),
    );
    expect(hits).toEqual([]);
  });

  it('finds what it looks for: a sibling fixture URL and a link above the root are caught', () => {
    expect(SIBLING.test("new URL('../../../shared/fixtures/telemetry/', import.meta.url)")).toBe(true);
    expect(SIBLING.test('see /work/shared/DESIGN.md')).toBe(true);
    expect(SIBLING.test('a shared secret')).toBe(false);
    const file = 'test/unit/adapters/fixture-helpers.ts';
    const paths = relativePaths(file, "const A = new URL('../../../../elsewhere/', import.meta.url); const B = new URL('../../fixtures/', import.meta.url);");
    expect(paths.filter((path) => escapes(file, path))).toEqual(['../../../../elsewhere/']);
    expect(
      relativePaths('test/fault/a.fault.ts', "join(import.meta.dirname, '..', '..', '..')").filter((path) => escapes('test/fault/a.fault.ts', path)),
    ).toEqual(['../../..']);
    expect(escapes('daemon/cli/run-program.ts', '../../../package.json')).toBe(false);
    expect(relativePaths('docs/a.md', '[x](../../outside.md) [y](../README.md)').filter((path) => escapes('docs/a.md', path))).toEqual(['../../outside.md']);
  });
});
