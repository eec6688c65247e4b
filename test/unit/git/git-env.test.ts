import { describe, expect, it } from 'vitest';
import { CONFIG_OVERRIDES, dataArg, gitEnv, SSH_COMMAND } from '../../../daemon/git/index.js';
import { lfsUrl } from '../../../daemon/git/lfs.js';
import { HandoffError } from '../../../protocol/index.js';

const hostile: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  GIT_CONFIG_PARAMETERS: "'core.pager'='touch /tmp/pwned'",
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'core.fsmonitor',
  GIT_CONFIG_VALUE_0: '/tmp/evil',
  GIT_EXEC_PATH: '/tmp/evil-exec',
  GIT_SSH: '/tmp/evil-ssh',
  GIT_SSH_COMMAND: 'evil-ssh',
  GIT_PROXY_COMMAND: '/tmp/evil-proxy',
  GIT_ASKPASS: '/tmp/ask',
  GIT_DIR: '/elsewhere/.git',
  GIT_INDEX_FILE: '/elsewhere/index',
  GIT_TRACE: '/tmp/trace',
  git_lowercase: 'x',
  SSH_ASKPASS: '/usr/bin/ssh-askpass',
  EDITOR: 'vim',
  PAGER: 'less',
  LC_ALL: 'de_DE.UTF-8',
};

describe('the environment every git of the daemon runs with', () => {
  it('drops every inherited GIT_* and prompting program, and sets the layer’s own', () => {
    const env = gitEnv({}, hostile);
    expect(
      Object.keys(env)
        .filter((name) => name.toUpperCase().startsWith('GIT_'))
        .sort(),
    ).toEqual(['GIT_ALLOW_PROTOCOL', 'GIT_OPTIONAL_LOCKS', 'GIT_PROXY_COMMAND', 'GIT_SSH_COMMAND', 'GIT_TERMINAL_PROMPT']);
    expect(env).toMatchObject({
      GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
      GIT_PROXY_COMMAND: '',
      GIT_TERMINAL_PROMPT: '0',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_SSH_COMMAND: SSH_COMMAND,
      GCM_INTERACTIVE: 'never',
      LC_ALL: 'C',
      PATH: '/usr/bin:/bin',
      HOME: '/home/u',
    });
    for (const name of ['SSH_ASKPASS', 'EDITOR', 'PAGER']) expect(env).not.toHaveProperty(name);
    expect(SSH_COMMAND).toMatch(/BatchMode=yes/);
  });

  it('traces git only when HANDOFF_GIT_TRACE2_EVENT names a file (GIT_TRACE2_EVENT itself is dropped)', () => {
    expect(gitEnv({}, { ...hostile, GIT_TRACE2_EVENT: '/tmp/x' })).not.toHaveProperty('GIT_TRACE2_EVENT');
    expect(gitEnv({}, { ...hostile, HANDOFF_GIT_TRACE2_EVENT: '/tmp/trace.json' })).toMatchObject({ GIT_TRACE2_EVENT: '/tmp/trace.json' });
  });

  it('lets a caller add a scratch index and an identity, nothing else', () => {
    expect(gitEnv({ GIT_INDEX_FILE: '/tmp/i', GIT_AUTHOR_NAME: 'a' }, hostile)).toMatchObject({ GIT_INDEX_FILE: '/tmp/i', GIT_AUTHOR_NAME: 'a' });
    expect(() => gitEnv({ GIT_DIR: '/x' }, hostile)).toThrow(/may not set GIT_DIR/);
  });

  it('turns off hooks, the fsmonitor, askpass and credential dialogs on every call', () => {
    const settings = CONFIG_OVERRIDES.filter((_, i) => i % 2 === 1);
    expect(CONFIG_OVERRIDES.filter((_, i) => i % 2 === 0).every((flag) => flag === '-c')).toBe(true);
    expect(settings).toEqual(expect.arrayContaining(['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'core.askPass=', 'credential.interactive=never']));
  });
});

describe('data is never an option', () => {
  it.each(['--upload-pack=touch /tmp/canary', '-u', '--exec=x', '-'])('refuses %j', (value) => {
    const error = (() => {
      try {
        dataArg(value, 'remote URL', 'corrupt_record');
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(HandoffError);
    expect(error).toMatchObject({ code: 'corrupt_record', message: expect.stringMatching(/remote URL .* starts with '-'/) as unknown });
  });

  it('passes refs, names and URLs through unchanged, and refuses an empty value', () => {
    for (const value of ['refs/heads/handoff/x', 'origin', 'https://host/r.git', 'git@host:r.git', '/srv/r.git']) expect(dataArg(value, 'ref')).toBe(value);
    expect(() => dataArg('', 'ref')).toThrow(HandoffError);
  });
});

describe('the URL git-lfs is given', () => {
  it('is a file:// URL for a local path and the remote URL otherwise', () => {
    expect(lfsUrl('/work/repo', '/srv/remote.git')).toBe('file:///srv/remote.git');
    expect(lfsUrl('/work/repo', '../remote.git')).toBe('file:///work/remote.git');
    expect(lfsUrl('/work/repo', 'https://host/team/r.git')).toBe('https://host/team/r.git');
    expect(lfsUrl('/work/repo', 'git@host:team/r.git')).toBe('git@host:team/r.git');
    expect(lfsUrl('/work/repo', 'file:///srv/r.git')).toBe('file:///srv/r.git');
  });
});
