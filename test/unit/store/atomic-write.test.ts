import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, writeFileAtomic, writeFileCreateOnce } from '../../../daemon/store/index.js';
import { modeOf, tempDir } from './fixtures.js';

describe('writeFileAtomic', () => {
  it('replaces the content with the exact mode and leaves no temp file', async () => {
    const dir = await tempDir();
    const target = join(dir, 'record.json');
    await writeFile(target, 'old');
    await writeFileAtomic(target, 'new content', 0o600);
    expect(await readFile(target, 'utf8')).toBe('new content');
    expect(modeOf((await lstat(target)).mode)).toBe(0o600);
    expect(await readdir(dir)).toEqual(['record.json']);
  });

  it('applies the requested mode even when the umask would strip bits', async () => {
    const dir = await tempDir();
    const target = join(dir, 'shared.txt');
    const previous = process.umask(0o077);
    try {
      await writeFileAtomic(target, new Uint8Array([1, 2, 3]), 0o644);
    } finally {
      process.umask(previous);
    }
    expect(modeOf((await lstat(target)).mode)).toBe(0o644);
    expect([...(await readFile(target))]).toEqual([1, 2, 3]);
  });

  it('replaces a planted symlink instead of writing through it', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim');
    const target = join(dir, 'daemon.json');
    await writeFile(victim, 'precious');
    await symlink(victim, target);
    await writeFileAtomic(target, 'ours', 0o600);
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await lstat(target)).isSymbolicLink()).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('ours');
  });

  it('removes its temp file when the rename fails', async () => {
    const dir = await tempDir();
    const target = join(dir, 'occupied');
    // rename() cannot replace a directory with a file, so the write fails after the temp file exists.
    await mkdir(target);
    await expect(writeFileAtomic(target, 'data', 0o600)).rejects.toThrow(/EISDIR/);
    expect(await readdir(dir)).toEqual(['occupied']);
  });
});

describe('writeFileCreateOnce', () => {
  it('creates a missing file with the exact mode and no temp file left', async () => {
    const dir = await tempDir();
    const target = join(dir, 'manifest.json');
    await writeFileCreateOnce(target, '{"a":1}', 0o600);
    expect(await readFile(target, 'utf8')).toBe('{"a":1}');
    expect(modeOf((await lstat(target)).mode)).toBe(0o600);
    expect(await readdir(dir)).toEqual(['manifest.json']);
  });

  it('refuses an existing file and keeps its content', async () => {
    const dir = await tempDir();
    const target = join(dir, 'manifest.json');
    await writeFile(target, 'first');
    await expect(writeFileCreateOnce(target, 'second', 0o600)).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(await readFile(target, 'utf8')).toBe('first');
    expect(await readdir(dir)).toEqual(['manifest.json']);
  });

  it('refuses a planted symlink, dangling or not, and never writes through it', async () => {
    const dir = await tempDir();
    const victim = join(dir, 'victim');
    await writeFile(victim, 'precious');
    const live = join(dir, 'live-link');
    const dangling = join(dir, 'dangling-link');
    await symlink(victim, live);
    await symlink(join(dir, 'nowhere'), dangling);

    await expect(writeFileCreateOnce(live, 'evil', 0o600)).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(writeFileCreateOnce(dangling, 'evil', 0o600)).rejects.toBeInstanceOf(AlreadyExistsError);

    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect(await readlink(live)).toBe(victim);
    expect(await readlink(dangling)).toBe(join(dir, 'nowhere'));
    expect((await readdir(dir)).sort()).toEqual(['dangling-link', 'live-link', 'victim']);
  });

  it('lets exactly one of many concurrent writers win, with its complete content', async () => {
    const dir = await tempDir();
    const target = join(dir, 'once');
    const writers = Array.from({ length: 16 }, (_, i) => `writer-${i}-${'x'.repeat(4096)}`);
    const results = await Promise.allSettled(writers.map((data) => writeFileCreateOnce(target, data, 0o600)));
    const winners = results.flatMap((result, i) => (result.status === 'fulfilled' ? [writers[i]] : []));
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AlreadyExistsError);
    }
    expect(await readFile(target, 'utf8')).toBe(winners[0]);
    expect(await readdir(dir)).toEqual(['once']);
  });
});
