import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownPackage } from '../../daemon/package-root.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: { handoff: string } };

describe('ownPackage: the install this code runs from', () => {
  it('is found from the sources as from the bundle: the root, its version and the bin `handoff` leads to', () => {
    expect(ownPackage()).toEqual({ root: ROOT, version: pkg.version, cli: join(ROOT, pkg.bin.handoff) });
    // The bundle scripts/bundle.mjs writes, not tsc's dist/daemon/cli/main.js.
    expect(pkg.bin.handoff).toBe('dist/bin/handoff.js');
  });
});
