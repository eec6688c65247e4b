import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = 'session-handoff';

export interface PackageInfo {
  /** The install's root: the folder of session-handoff's package.json. */
  readonly root: string;
  readonly version: string;
  /** The file `handoff` leads to (package.json's `bin`), absolute: the bundle the build writes. */
  readonly cli: string;
}

let found: PackageInfo | undefined;

/**
 * The install this code runs from, found by walking up from this module. The same code runs from
 * three places — the bundle (dist/bin/, what `handoff` runs), tsc's output (dist/daemon/) and the
 * sources (daemon/, under the tests) — so a path relative to one module would be right in only one.
 */
export function ownPackage(): PackageInfo {
  if (found !== undefined) return found;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string; bin?: { handoff?: string } };
      if (pkg.name === NAME && typeof pkg.version === 'string' && typeof pkg.bin?.handoff === 'string') {
        found = { root: dir, version: pkg.version, cli: join(dir, pkg.bin.handoff) };
        return found;
      }
    }
    if (dirname(dir) === dir) throw new Error(`no package.json of ${NAME} above ${fileURLToPath(import.meta.url)}: the install is incomplete`);
  }
}
