import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What ships or documents the product: its source, its scripts and examples, README and docs/. */
const PRODUCT_DIRS = ['protocol', 'daemon', 'adapters', 'schemas', 'scripts', 'examples', 'docs'];
const TOP_DIRS = [...PRODUCT_DIRS, 'test'];
const SCANNED = /\.(ts|mjs|md|json)$/;

/**
 * Markdown files that live in a user's repository or home, not in this one: the package the daemon
 * writes (HANDOFF.md, HANDOFF.2.md for a later revision), the instruction files the installers edit or
 * the receiver reads, and the note the demo writes into its scratch repository.
 */
const USER_FILES = new Set([
  'HANDOFF.md',
  'HANDOFF.2.md',
  'NOTES.md',
  'AGENTS.md',
  'CLAUDE.md',
  'CLAUDE.local.md',
  'GEMINI.md',
  'session-handoff.md',
  'handoff-capsule.md',
  'copilot-instructions.md',
]);

/** Files a script writes into this repository, cited before their first run has written them. */
const WRITTEN_BY_SCRIPTS = new Set([
  // `npm run mutation` writes it; committed once a full run has been made (README, issue 37).
  'test/mutation/stryker-incremental.json',
]);

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : filesUnder(path);
    return SCANNED.test(entry.name) ? [path] : [];
  });
}

const TOP_PAGES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'];
const product = [...TOP_PAGES, ...PRODUCT_DIRS.flatMap(filesUnder)].filter((path) => !path.endsWith('openapi.json'));
const markdownNames = new Set([...TOP_PAGES, ...TOP_DIRS.flatMap(filesUnder)].filter((path) => path.endsWith('.md')).map((path) => basename(path)));

/**
 * A cited path that is not there: one under a top directory of this repository must exist from the
 * root (or from the citing file's directory, as relative links do); a bare Markdown name must be a
 * page of this repository or a file of the user's.
 */
function missing(file: string, cited: string): boolean {
  const path = cited.replace(/^\.\//, '');
  // `../` in code is a path from the built file's place in dist/ (tsc checks imports); in Markdown, a link.
  if (/[*{<>$]/.test(path) || path.startsWith('/') || (path.startsWith('../') && !file.endsWith('.md'))) return false;
  const underTop = TOP_DIRS.some((dir) => path.startsWith(`${dir}/`));
  if (WRITTEN_BY_SCRIPTS.has(path)) return false;
  if (underTop || path.startsWith('../')) return !existsSync(join(ROOT, path)) && !existsSync(join(ROOT, dirname(file), path));
  if (!path.endsWith('.md')) return false;
  const name = basename(path);
  if (path.includes('/') && !existsSync(join(ROOT, dirname(file), path))) return !USER_FILES.has(name);
  return !markdownNames.has(name) && !USER_FILES.has(name);
}

describe('files the product and its docs cite', () => {
  it('exist in this repository: no citation of a file outside it (CONTRACT.md, DESIGN.md …)', () => {
    const cited: string[] = [];
    for (const file of product) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [token] of text.matchAll(/[\w./-]*[\w-]\.(?:md|ts|mjs|json)\b/g)) {
        if (missing(file, token)) cited.push(`${file}: ${token}`);
      }
    }
    expect(cited).toEqual([]);
  });

  it('say which file is missing: a citation of CONTRACT.md or DESIGN.md is found', () => {
    expect(missing('protocol/codes.ts', 'CONTRACT.md')).toBe(true);
    expect(missing('docs/codes.md', 'DESIGN.md')).toBe(true);
    expect(missing('daemon/precompiled.ts', 'daemon/validation.ts')).toBe(true);
    expect(missing('docs/concepts.md', 'codes.md')).toBe(false);
    expect(missing('README.md', 'docs/http-api.md')).toBe(false);
    expect(missing('daemon/evacuation/package-writer.ts', 'HANDOFF.md')).toBe(false);
  });
});
