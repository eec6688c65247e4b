import { chmod, chown, lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStateDir, readClientToken, resolveStateDir, rotateToken } from '../../../daemon/store/index.js';
import { handoffErrorOf, modeOf, tempDir } from './fixtures.js';

const uid = process.getuid?.() ?? 0;
const HEX64 = /^[0-9a-f]{64}$/;

describe('resolveStateDir', () => {
  it('prefers HANDOFF_STATE_DIR', () => {
    expect(resolveStateDir({ HANDOFF_STATE_DIR: '/s', XDG_STATE_HOME: '/x' }, '/home/u')).toBe('/s');
  });

  it('falls back to $XDG_STATE_HOME/session-handoff', () => {
    expect(resolveStateDir({ XDG_STATE_HOME: '/x' }, '/home/u')).toBe('/x/session-handoff');
  });

  it('falls back to ~/.local/state/session-handoff, treating empty values as unset', () => {
    expect(resolveStateDir({ HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '' }, '/home/u')).toBe('/home/u/.local/state/session-handoff');
    expect(resolveStateDir({}, '/home/u')).toBe('/home/u/.local/state/session-handoff');
  });

  it('ignores a relative XDG_STATE_HOME, as the XDG spec requires', () => {
    expect(resolveStateDir({ XDG_STATE_HOME: 'rel' }, '/home/u')).toBe('/home/u/.local/state/session-handoff');
  });
});

describe('openStateDir', () => {
  it('creates a missing dir 0700 with a 0600 token of 64 hex digits, and reuses it', async () => {
    const dir = join(await tempDir(), 'a', 'b', 'session-handoff');
    const first = await openStateDir(dir, { uid });
    expect(first.dir).toBe(dir);
    expect(first.token).toMatch(HEX64);
    expect(modeOf((await lstat(dir)).mode)).toBe(0o700);
    const tokenPath = join(dir, 'token');
    expect(modeOf((await lstat(tokenPath)).mode)).toBe(0o600);
    expect(await readFile(tokenPath, 'utf8')).toBe(first.token);
    expect(await readdir(dir)).toEqual(['token']);

    const second = await openStateDir(dir, { uid });
    expect(second.token).toBe(first.token);
  });

  it('creates the dir exactly 0700 even when the umask strips owner bits', async () => {
    const dir = join(await tempDir(), 'state');
    const previous = process.umask(0o200);
    try {
      await openStateDir(dir, { uid });
    } finally {
      process.umask(previous);
    }
    expect(modeOf((await lstat(dir)).mode)).toBe(0o700);
  });

  it('gives concurrent openers the same token', async () => {
    const dir = join(await tempDir(), 'state');
    const opened = await Promise.all(Array.from({ length: 8 }, () => openStateDir(dir, { uid })));
    expect(new Set(opened.map((state) => state.token)).size).toBe(1);
  });

  it('refuses a dir with mode 0755, naming the path, the mode and the chmod fix', async () => {
    const dir = join(await tempDir(), 'state');
    await mkdir(dir);
    await chmod(dir, 0o755);
    const error = await handoffErrorOf(openStateDir(dir, { uid }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toContain(dir);
    expect(error.message).toContain('0755');
    expect(error.hint).toBe(`chmod 700 '${dir}'`);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a dir owned by another uid', async () => {
    const dir = join(await tempDir(), 'state');
    await mkdir(dir, { mode: 0o700 });
    const error = await handoffErrorOf(openStateDir(dir, { uid: uid + 1 }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toContain(`owned by uid ${uid}`);
    expect(error.hint).toContain(`chown ${uid + 1} '${dir}'`);
  });

  it('refuses a symlinked dir and a path that is not a dir', async () => {
    const root = await tempDir();
    const real = join(root, 'real');
    await mkdir(real, { mode: 0o700 });
    const link = join(root, 'link');
    await symlink(real, link);
    expect((await handoffErrorOf(openStateDir(link, { uid }))).message).toContain('symlink');

    const file = join(root, 'file');
    await writeFile(file, '', { mode: 0o600 });
    const error = await handoffErrorOf(openStateDir(file, { uid }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toContain('not a directory');
    expect(await readdir(real)).toEqual([]);
  });

  it('refuses a token readable by others with the chmod 600 fix', async () => {
    const dir = join(await tempDir(), 'state');
    await openStateDir(dir, { uid });
    const tokenPath = join(dir, 'token');
    await chmod(tokenPath, 0o644);
    const error = await handoffErrorOf(openStateDir(dir, { uid }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toContain('0644');
    expect(error.hint).toBe(`chmod 600 '${tokenPath}'`);
  });

  // Giving a file away needs root; elsewhere the dir check is the one that can be exercised.
  it.skipIf(uid !== 0)('refuses a token owned by another uid', async () => {
    const dir = join(await tempDir(), 'state');
    await mkdir(dir, { mode: 0o700 });
    const tokenPath = join(dir, 'token');
    await writeFile(tokenPath, 'a'.repeat(64), { mode: 0o600 });
    await chown(tokenPath, 4321, 4321);
    const error = await handoffErrorOf(openStateDir(dir, { uid }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toBe(`${tokenPath} is owned by uid 4321, not by uid ${uid} that runs the daemon`);
  });

  it('refuses a symlinked token and leaves its target alone', async () => {
    const root = await tempDir();
    const dir = join(root, 'state');
    await mkdir(dir, { mode: 0o700 });
    const elsewhere = join(root, 'elsewhere');
    await writeFile(elsewhere, 'b'.repeat(64), { mode: 0o600 });
    await symlink(elsewhere, join(dir, 'token'));
    const error = await handoffErrorOf(openStateDir(dir, { uid }));
    expect(error.code).toBe('insecure_state_dir');
    expect(error.message).toContain('symlink');
    expect(await readFile(elsewhere, 'utf8')).toBe('b'.repeat(64));
    expect((await lstat(join(dir, 'token'))).isSymbolicLink()).toBe(true);
  });

  it('reports a token that is not 64 hex digits as corrupt and says to delete it', async () => {
    const dir = join(await tempDir(), 'state');
    await mkdir(dir, { mode: 0o700 });
    const tokenPath = join(dir, 'token');
    await writeFile(tokenPath, 'abc123', { mode: 0o600 });
    const error = await handoffErrorOf(openStateDir(dir, { uid }));
    expect(error.code).toBe('corrupt_record');
    expect(error.hint).toContain(`rm '${tokenPath}'`);
    expect(error.hint).toContain('new token');
    expect(await readFile(tokenPath, 'utf8')).toBe('abc123');
  });

  it('accepts a hand-written token with one trailing newline', async () => {
    const dir = join(await tempDir(), 'state');
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, 'token'), `${'c'.repeat(64)}\n`, { mode: 0o600 });
    expect((await openStateDir(dir, { uid })).token).toBe('c'.repeat(64));
  });
});

describe('rotateToken', () => {
  it('replaces the token with a new 0600 one each time, and creates it when missing', async () => {
    const dir = join(await tempDir(), 'state');
    const { token: first } = await openStateDir(dir, { uid });
    const tokenPath = join(dir, 'token');
    const second = await rotateToken(tokenPath, uid);
    expect(second).toMatch(HEX64);
    expect(second).not.toBe(first);
    expect(await readFile(tokenPath, 'utf8')).toBe(second);
    expect(modeOf((await lstat(tokenPath)).mode)).toBe(0o600);
    expect(await readdir(dir)).toEqual(['token']);
    const fresh = join(await tempDir(), 'token');
    expect(await rotateToken(fresh, uid)).toBe(await readFile(fresh, 'utf8'));
  });

  it('refuses to replace a planted symlink or a shared token, and leaves both alone', async () => {
    const root = await tempDir();
    const elsewhere = join(root, 'elsewhere');
    await writeFile(elsewhere, 'b'.repeat(64), { mode: 0o600 });
    const link = join(root, 'token');
    await symlink(elsewhere, link);
    expect((await handoffErrorOf(rotateToken(link, uid))).code).toBe('insecure_state_dir');
    expect(await readFile(elsewhere, 'utf8')).toBe('b'.repeat(64));
    const shared = join(root, 'shared');
    await writeFile(shared, 'c'.repeat(64), { mode: 0o644 });
    await chmod(shared, 0o644);
    expect((await handoffErrorOf(rotateToken(shared, uid))).hint).toBe(`chmod 600 '${shared}'`);
    expect(await readFile(shared, 'utf8')).toBe('c'.repeat(64));
  });
});

describe('readClientToken: the CLI side of the same checks', () => {
  it('reads the token of a private state dir; null when the dir or the token is missing', async () => {
    const dir = join(await tempDir(), 'state');
    expect(await readClientToken(dir, uid)).toBeNull();
    await mkdir(dir, { mode: 0o700 });
    expect(await readClientToken(dir, uid)).toBeNull();
    const { token } = await openStateDir(dir, { uid });
    expect(await readClientToken(dir, uid)).toBe(token);
  });

  it('refuses what the daemon refuses, with the same code and hint', async () => {
    const dir = join(await tempDir(), 'state');
    await openStateDir(dir, { uid });
    await chmod(join(dir, 'token'), 0o640);
    const [client, daemon] = [await handoffErrorOf(readClientToken(dir, uid)), await handoffErrorOf(openStateDir(dir, { uid }))];
    expect([client.code, client.message, client.hint]).toEqual([daemon.code, daemon.message, daemon.hint]);
    await chmod(join(dir, 'token'), 0o600);
    await chmod(dir, 0o750);
    const open = await handoffErrorOf(readClientToken(dir, uid));
    expect([open.code, open.hint]).toEqual(['insecure_state_dir', `chmod 700 '${dir}'`]);
    await chmod(dir, 0o700);
    const link = join(await tempDir(), 'link');
    await symlink(dir, link);
    expect((await handoffErrorOf(readClientToken(link, uid))).message).toBe(`${link} is a symlink; it must be a real directory owned by you`);
  });
});
