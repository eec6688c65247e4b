import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diskIo } from '../../daemon/cli/install-disk.js';
import { isHandoffError } from '../../protocol/errors.js';
import { tempDir, tempRepo } from '../support/git.js';
import { piped } from './ingest-support.js';
import { linkedHandoffPath } from '../support/linked-handoff.js';

/**
 * Installers write only their own bytes, only where they may: no link followed inside a repository,
 * a user config that is a link edited at its target, a read-only file left alone, and every file an
 * install writes changed together or not at all. Runs the built CLI; no daemon needed.
 */
async function install(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const run = await piped(['install', ...args], '', {
    cwd: options.cwd,
    env: { HOME: tempDir('home'), HANDOFF_STATE_DIR: '', XDG_STATE_HOME: '', PATH: linkedHandoffPath(), ...options.env },
  });
  type Json = {
    code: string;
    data: { files: { path: string; action: string; backup: string | null }[]; notes: string[] } | null;
    error?: { message: string; hint: string };
  };
  return { ...run, json: (args.includes('--json') ? JSON.parse(run.stdout) : {}) as Json };
}

/** Every file under `dir` (links not followed), with its bytes: what a test compares before and after. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const facts = lstatSync(path);
      if (facts.isSymbolicLink()) out[path] = `-> ${readlinkSync(path)}`;
      else if (facts.isDirectory()) {
        if (name !== '.git') walk(path);
      } else out[path] = readFileSync(path, 'utf8');
    }
  };
  walk(dir);
  return out;
}

const SECRET = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-not-a-real-key\n-----END OPENSSH PRIVATE KEY-----\n';

function secretFile(): string {
  const path = join(tempDir('ssh'), 'id_ed25519');
  writeFileSync(path, SECRET, { mode: 0o600 });
  return path;
}

describe('a link planted in a repository is refused, and nothing is copied', () => {
  it('cline: .clinerules/session-handoff.md linking to a key — install and --dry-run refuse, naming the link', async () => {
    const repo = tempRepo();
    const secret = secretFile();
    mkdirSync(join(repo, '.clinerules'));
    const link = join(repo, '.clinerules', 'session-handoff.md');
    symlinkSync(secret, link);
    const before = snapshot(repo);
    for (const extra of [[], ['--dry-run']]) {
      const run = await install(['cline', '--json', ...extra], { cwd: repo });
      expect(run.code).toBe(65);
      expect(run.json.error?.message).toBe(
        `${link} is a symbolic link inside the repository ${repo}; handoff install never writes through a link in a repository`,
      );
      expect(run.stdout + run.stderr).not.toContain('OPENSSH');
      const human = await install(['cline', ...extra], { cwd: repo });
      expect(human.code).toBe(65);
      expect(human.stdout + human.stderr).not.toContain('OPENSSH');
    }
    // No copy in the repository, no backup beside the link, and the key itself untouched.
    expect(snapshot(repo)).toEqual(before);
    expect(readFileSync(secret, 'utf8')).toBe(SECRET);
    expect(readdirSync(join(secret, '..'))).toEqual(['id_ed25519']);
  });

  it('cline: a .clinerules link to a directory outside the repository — nothing is written there', async () => {
    const repo = tempRepo();
    const outside = tempDir('outside');
    symlinkSync(outside, join(repo, '.clinerules'));
    const run = await install(['cline', '--json'], { cwd: repo });
    expect(run.code).toBe(65);
    expect(run.json.error?.message).toContain(`${join(repo, '.clinerules')} is a symbolic link inside the repository`);
    expect(readdirSync(outside)).toEqual([]);
  });

  it("claude --settings: a repository's .claude linking elsewhere is refused too, for every file of the install", async () => {
    const repo = tempRepo();
    const outside = tempDir('outside');
    writeFileSync(join(outside, 'settings.json'), '{}\n');
    symlinkSync(outside, join(repo, '.claude'));
    const run = await install(['claude', '--settings', join(repo, '.claude', 'settings.json'), '--json']);
    expect(run.code).toBe(65);
    expect(run.json.error?.message).toContain(`${join(repo, '.claude')} is a symbolic link inside the repository ${repo}`);
    expect(snapshot(outside)).toEqual({ [join(outside, 'settings.json')]: '{}\n' });
  });
});

describe('user configs', () => {
  it('a settings.json that is a link (dotfiles) is edited at its target, in place; the link stays a link', async () => {
    const home = tempDir('home');
    const dotfiles = tempDir('dotfiles');
    const real = join(dotfiles, 'claude-settings.json');
    writeFileSync(real, '{\n  "model": "opus" // mine\n}\n', { mode: 0o640 });
    mkdirSync(join(home, '.claude'));
    const link = join(home, '.claude', 'settings.json');
    symlinkSync(real, link);
    const run = await install(['claude', '--json'], { env: { HOME: home, CLAUDE_CONFIG_DIR: '' } });
    expect(run.code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    const text = readFileSync(real, 'utf8');
    // Inserted after the last property: the user's comment now closes our block, every byte kept.
    expect(text.startsWith('{\n  "model": "opus",\n  "statusLine": {\n')).toBe(true);
    expect(text.endsWith('\n  } // mine\n}\n')).toBe(true);
    expect(text).toContain('handoff hook claude-guard');
    expect(lstatSync(real).mode & 0o777).toBe(0o640);
    expect(run.json.data?.notes).toContain(`${link} is a symbolic link: the install edits its target ${real} in place and keeps the link`);
    const backup = run.json.data?.files[0]?.backup ?? '';
    expect(backup.startsWith(`${link}.handoff-backup-`)).toBe(true);
    expect(readFileSync(backup, 'utf8')).toBe('{\n  "model": "opus" // mine\n}\n');
    // Twice = once, through the link too.
    const again = await install(['claude', '--json'], { env: { HOME: home, CLAUDE_CONFIG_DIR: '' } });
    expect(again.json.data?.files.map((file) => file.action)).toEqual(['unchanged', 'unchanged']);
  });

  it('a read-only (0444) settings.json is refused and left as it is', async () => {
    const dir = tempDir('claude');
    const path = join(dir, 'settings.json');
    writeFileSync(path, '{ "model": "opus" }\n');
    chmodSync(path, 0o444);
    const run = await install(['claude', '--settings', path, '--json']);
    expect(run.code).toBe(65);
    expect(run.json.error?.message).toBe(`${path} is read-only`);
    expect(run.json.error?.hint).toMatch(/chmod u\+w/);
    expect(snapshot(dir)).toEqual({ [path]: '{ "model": "opus" }\n' });
    expect(lstatSync(path).mode & 0o777).toBe(0o444);
  });
});

describe('all or nothing', () => {
  it('when the second file cannot be written, the first is left as it was: no change, no backup, no temp file', async () => {
    const dir = tempDir('claude');
    const path = join(dir, 'settings.json');
    const original = '{\n  "model": "opus",\n  "budget": 12345678901234567890\n}\n';
    writeFileSync(path, original);
    // The slash command goes to commands/handoff-capsule.md; a file named `commands` is in the way.
    writeFileSync(join(dir, 'commands'), 'not a directory\n');
    const before = snapshot(dir);
    const run = await install(['claude', '--settings', path, '--json']);
    expect(run.code).toBe(75);
    expect(run.json.code).toBe('install_failed');
    expect(run.json.error?.message).toMatch(
      new RegExp(`^could not write ${join(dir, 'commands', 'handoff-capsule.md')} \\(.+\\); every file was left as it was$`),
    );
    expect(snapshot(dir)).toEqual(before);
  });
  it('when a file fails to go in place after another one did, the one already replaced gets its bytes back', async () => {
    const dir = tempDir('commit');
    const first = join(dir, 'settings.json');
    writeFileSync(first, 'old settings\n', { mode: 0o640 });
    const created = join(dir, 'new', 'created.md');
    // rename() cannot replace a directory that holds something: the third write fails at the last step.
    const blocked = join(dir, 'blocked');
    mkdirSync(blocked);
    writeFileSync(join(blocked, 'keep'), 'x');
    const before = snapshot(dir);
    const failure = await diskIo
      .commit([
        { path: first, text: 'new settings\n', before: 'old settings\n', backup: { path: `${first}.handoff-backup-1`, text: 'old settings\n' } },
        { path: created, text: 'ours\n', before: null, backup: null },
        { path: blocked, text: 'ours\n', before: null, backup: null },
      ])
      .then(
        () => null,
        (error: unknown) => error as Error,
      );
    expect(isHandoffError(failure) && failure.code).toBe('install_failed');
    expect(failure?.message).toMatch(new RegExp(`^could not write ${blocked} \\(.+\\); every file was left as it was$`));
    expect(snapshot(dir)).toEqual(before);
    expect(lstatSync(first).mode & 0o777).toBe(0o640);
  });
});

describe('byte for byte', () => {
  it('a settings.json with comments, 12345678901234567890, 1.0 and odd layout keeps every byte outside our hooks', async () => {
    const dir = tempDir('claude');
    const path = join(dir, 'settings.json');
    const original =
      '// by hand\n{ "model": "opus",   "budget": 12345678901234567890,\n  "ratio": 1.0,\n  "statusLine": { "type": "command", "command": "mine.sh", "padding": 1 },\n  "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "bye" } ] } ] } /* end */\n}\n';
    writeFileSync(path, original);
    const run = await install(['claude', '--settings', path, '--json']);
    expect(run.code).toBe(0);
    const text = readFileSync(path, 'utf8');
    // Our edits: the status line command wraps the user's, the hooks go into the hooks object.
    const mine = text.replace(`handoff hook claude-statusline --chain 'mine.sh'`, 'mine.sh');
    let j = 0;
    for (const char of original) {
      j = mine.indexOf(char, j) + 1;
      expect(j).toBeGreaterThan(0);
    }
    expect(text.startsWith('// by hand\n{ "model": "opus",   "budget": 12345678901234567890,\n  "ratio": 1.0,\n')).toBe(true);
    expect(text.endsWith(' /* end */\n}\n')).toBe(true);
  });
});
