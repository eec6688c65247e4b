import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotRegularFileError, readRegularFile } from '../../../daemon/store/regular-file.js';

const dir = () => mkdtempSync(join(tmpdir(), 'handoff-regular-'));

describe('readRegularFile', () => {
  it('reads a regular file; a missing one is ENOENT as readFile has it', async () => {
    const root = dir();
    writeFileSync(join(root, 'HANDOFF.md'), 'text');
    expect((await readRegularFile(join(root, 'HANDOFF.md'))).toString()).toBe('text');
    await expect(readRegularFile(join(root, 'absent.md'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a symbolic link at the file, without reading its target', async () => {
    const root = dir();
    writeFileSync(join(root, 'target'), 'secret');
    symlinkSync(join(root, 'target'), join(root, 'HANDOFF.md'));
    const refused = await readRegularFile(join(root, 'HANDOFF.md')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotRegularFileError);
    expect((refused as NotRegularFileError).what).toBe('a symbolic link');
  });

  it('refuses a FIFO without hanging, and a directory', async () => {
    const root = dir();
    execFileSync('mkfifo', [join(root, 'fifo')]);
    mkdirSync(join(root, 'sub'));
    await expect(readRegularFile(join(root, 'fifo'))).rejects.toMatchObject({ what: 'not a regular file' });
    await expect(readRegularFile(join(root, 'sub'))).rejects.toMatchObject({ what: 'not a regular file' });
  });

  it('with `within`, refuses a linked directory on the way', async () => {
    const root = dir();
    const elsewhere = dir();
    writeFileSync(join(elsewhere, 'manifest.json'), '{}');
    symlinkSync(elsewhere, join(root, 'cycle'));
    expect((await readRegularFile(join(root, 'cycle', 'manifest.json'))).toString()).toBe('{}');
    await expect(readRegularFile(join(root, 'cycle', 'manifest.json'), { within: root })).rejects.toMatchObject({
      what: 'a symbolic link',
      path: join(root, 'cycle'),
    });
  });
});
