import { lstat, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDaemonInfo, removeDaemonInfo, writeDaemonInfo, type DaemonInfo } from '../../../daemon/store/index.js';
import { handoffErrorOf, modeOf, tempDir } from './fixtures.js';

const info: DaemonInfo = { pid: 4242, port: 51234, protocol_version: 1, started_at: '2026-11-29T08:15:00.000Z' };

describe('daemon.json', () => {
  it('round-trips atomically with mode 0600 and no temp files', async () => {
    const dir = await tempDir();
    await writeDaemonInfo(dir, { ...info, extra: 'dropped' } as DaemonInfo);
    expect(modeOf((await lstat(join(dir, 'daemon.json'))).mode)).toBe(0o600);
    expect(await readdir(dir)).toEqual(['daemon.json']);
    expect(await readDaemonInfo(dir)).toEqual(info);
  });

  it('reads null when missing', async () => {
    expect(await readDaemonInfo(await tempDir())).toBeNull();
  });

  it('reports unparsable or incomplete content as corrupt_record', async () => {
    const dir = await tempDir();
    const path = join(dir, 'daemon.json');
    await writeFile(path, '{"pid":');
    const error = await handoffErrorOf(readDaemonInfo(dir));
    expect(error.code).toBe('corrupt_record');
    expect(error.message).toContain(path);
    await writeFile(path, JSON.stringify({ ...info, port: 70000 }));
    expect((await handoffErrorOf(readDaemonInfo(dir))).code).toBe('corrupt_record');
  });

  it('does not follow a symlink planted as daemon.json', async () => {
    const dir = await tempDir();
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(elsewhere, JSON.stringify(info));
    await symlink(elsewhere, join(dir, 'daemon.json'));
    expect((await handoffErrorOf(readDaemonInfo(dir))).code).toBe('corrupt_record');
  });

  it('is removed only by the pid it names', async () => {
    const dir = await tempDir();
    await writeDaemonInfo(dir, info);
    expect(await removeDaemonInfo(dir, info.pid + 1)).toBe(false);
    expect(await readDaemonInfo(dir)).toEqual(info);
    expect(await removeDaemonInfo(dir, info.pid)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
    expect(await removeDaemonInfo(dir, info.pid)).toBe(false);
  });

  it('leaves a corrupt record in place on removal', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'daemon.json'), 'not json');
    expect(await removeDaemonInfo(dir, info.pid)).toBe(false);
    expect(await readdir(dir)).toEqual(['daemon.json']);
  });
});
