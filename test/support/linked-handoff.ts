import { chmodSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { CLI } from './daemon.js';
import { tempDir } from './git.js';

/** PATH as after `npm link`: `handoff` is a link to this build's CLI entry, ahead of the rest. */
export function linkedHandoffPath(): string {
  const bin = tempDir('bin');
  // npm makes a package's bin executable when it links it; the build leaves it 0644.
  chmodSync(CLI, 0o755);
  symlinkSync(CLI, join(bin, 'handoff'));
  return [bin, process.env['PATH'] ?? ''].join(delimiter);
}
