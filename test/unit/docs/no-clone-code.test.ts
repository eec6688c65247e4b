import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where a command the user is told to run can come from: the docs, README, examples, and every hint or message of the code. */
const SCANNED_DIRS = ['docs', 'examples', 'daemon', 'protocol', 'adapters', 'schemas', 'scripts'];

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : filesUnder(path);
    return /\.(ts|mjs|md|json|sh|toml)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * Issue 23, attack 4: `npx session-handoff …` in a clone prefers the clone's `node_modules/.bin`,
 * which the remote wrote, and runs it before anything is verified. No doc or hint tells the user to
 * run the program through npx or from a `node_modules/.bin/` path; the installed `handoff` is the one.
 */
const RUNS_CLONE_CODE: readonly RegExp[] = [/\bnpx\s+(?:--?[\w-]+(?:=\S+)?\s+)*(?:session-handoff|handoff)\b/, /node_modules\/\.bin\/[\w-]/];

describe('no doc or hint runs code from a clone', () => {
  const files = ['README.md', ...SCANNED_DIRS.flatMap(filesUnder)];

  it('scans the docs, examples and the code that prints hints', () => {
    expect(files).toContain('docs/running-at-login.md');
    expect(files).toContain('daemon/takeover/takeover-service.ts');
    expect(files.length).toBeGreaterThan(100);
  });

  it('none says `npx session-handoff`, `npx handoff` or `node_modules/.bin/…`', () => {
    const found = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (RUNS_CLONE_CODE.some((pattern) => pattern.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('the patterns catch the commands they are about', () => {
    for (const line of [
      '`npx session-handoff accept --latest`',
      'npx handoff daemon',
      'npx --yes session-handoff verify',
      './node_modules/.bin/handoff accept',
    ])
      expect(
        RUNS_CLONE_CODE.some((pattern) => pattern.test(line)),
        line,
      ).toBe(true);
    expect(RUNS_CLONE_CODE.some((pattern) => pattern.test('never `npx …` inside the clone: it prefers the clone’s `node_modules/.bin`'))).toBe(false);
  });
});
