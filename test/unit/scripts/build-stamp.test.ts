import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs build script without types
import { beginStamp, isCurrent, writeStamp } from '../../../scripts/build-stamp.mjs';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'build-stamp-'));
  dirs.push(root);
  for (const dir of ['protocol', 'schemas', 'adapters', 'daemon/generated', 'scripts', 'dist']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{}');
  writeFileSync(join(root, 'protocol/a.ts'), 'export const a = 1;\n');
  return root;
}

const build = (root: string, edit = () => {}) => {
  beginStamp(root);
  edit();
  writeStamp(root);
};

describe('the build stamp: npm scripts rebuild dist/ only when a source changed', () => {
  it('is current right after a build and stale after any source edit or a new file', () => {
    const root = tree();
    expect(isCurrent(root)).toBe(false);
    build(root);
    expect(isCurrent(root)).toBe(true);
    writeFileSync(join(root, 'protocol/a.ts'), 'export const a = 2;\n');
    expect(isCurrent(root)).toBe(false);
    build(root);
    writeFileSync(join(root, 'daemon/new-file.ts'), '');
    expect(isCurrent(root)).toBe(false);
  });

  it('ignores what the build itself writes beside the sources (the generated validators)', () => {
    const root = tree();
    build(root);
    writeFileSync(join(root, 'daemon/generated/validators.js'), 'export const validators = new Map();\n');
    expect(isCurrent(root)).toBe(true);
  });

  it('hashes the sources as the build starts: an edit made while it runs leaves dist/ stale', () => {
    const root = tree();
    build(root, () => writeFileSync(join(root, 'protocol/a.ts'), 'export const a = 3;\n'));
    expect(isCurrent(root)).toBe(false);
  });

  it('is what `npm run build` writes last, and the scripts that only need a dist/ check it instead of rebuilding', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['build']).toMatch(/node scripts\/build-stamp\.mjs begin && tsc .* && node scripts\/build-stamp\.mjs write$/);
    for (const name of ['start', 'test:unit', 'demo', 'bench']) expect(pkg.scripts[name]).toMatch(/^node scripts\/build-stamp\.mjs ensure && /);
    // CI and `npm test` build from clean.
    expect(pkg.scripts['test']).toMatch(/^npm run build && /);
  });

  it('refuses an unknown mode with a usage line', () => {
    let status = 0;
    try {
      execFileSync(process.execPath, [join(ROOT, 'scripts/build-stamp.mjs'), 'bogus'], { stdio: 'pipe' });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(64);
  });
});
