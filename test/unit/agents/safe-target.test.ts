import { describe, expect, it } from 'vitest';
import { safeTarget, type InstallIo, type PathFacts } from '../../../adapters/agents/index.js';
import { isHandoffError } from '../../../protocol/errors.js';

/** A file system as data: what is at each path (lstat), where each link leads, which directories are repositories. */
function io(entries: Record<string, PathFacts & { to?: string }>, repositories: readonly string[] = []): InstallIo {
  return {
    read: async () => expect.unreachable('safeTarget reads no file'),
    inspect: async (path) => entries[path] ?? { kind: 'missing', writable: true },
    realpath: async (path) => entries[path]?.to ?? null,
    repositoryOf: async (path) => repositories.filter((repo) => path.startsWith(`${repo}/`)).sort((a, b) => b.length - a.length)[0] ?? null,
    commit: async () => expect.unreachable('safeTarget writes nothing'),
  };
}

const file: PathFacts = { kind: 'file', writable: true };
const dir: PathFacts = { kind: 'directory', writable: true };
const link = (to: string): PathFacts & { to: string } => ({ kind: 'symlink', writable: true, to });

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(isHandoffError(error) && error.code).toBe('install_refused');
    return (error as Error).message;
  }
  return expect.unreachable('refused');
}

describe('safeTarget', () => {
  it('in a repository: a link at any level below the root is refused, naming it; the root itself may be reached through links', async () => {
    const fs = io({ '/r/.clinerules': dir, '/r/.clinerules/session-handoff.md': link('/home/u/.ssh/id_ed25519'), '/r/.claude': link('/elsewhere') }, ['/r']);
    expect(await refusal(safeTarget('/r/.clinerules/session-handoff.md', fs, []))).toBe(
      '/r/.clinerules/session-handoff.md is a symbolic link inside the repository /r; handoff install never writes through a link in a repository',
    );
    expect(await refusal(safeTarget('/r/.claude/settings.json', fs, []))).toMatch(/^\/r\/\.claude is a symbolic link inside the repository \/r;/);
    expect(await safeTarget('/r/.gemini/settings.json', fs, [])).toBe('/r/.gemini/settings.json');
  });

  it('in a repository: a regular file is written where it is; a directory or a read-only file is refused', async () => {
    const fs = io({ '/r/a': dir, '/r/a/f.md': file, '/r/ro.md': { kind: 'file', writable: false }, '/r/d.md': dir, '/r/x': file }, ['/r']);
    expect(await safeTarget('/r/a/f.md', fs, [])).toBe('/r/a/f.md');
    expect(await refusal(safeTarget('/r/ro.md', fs, []))).toBe('/r/ro.md is read-only');
    expect(await refusal(safeTarget('/r/d.md', fs, []))).toBe('/r/d.md is not a regular file');
    expect(await refusal(safeTarget('/r/x/f.md', fs, []))).toBe('/r/x is not a directory');
  });

  it('a user config that is a link is written at its target, and the note says so; a dangling or read-only target is refused', async () => {
    const notes: string[] = [];
    const fs = io({
      '/h/.claude/settings.json': link('/h/dotfiles/claude.json'),
      '/h/dotfiles/claude.json': file,
      '/h/.gemini/settings.json': link('/h/dotfiles/gone.json'),
      '/h/.codex/hooks.json': link('/h/dotfiles/ro.json'),
      '/h/dotfiles/ro.json': { kind: 'file', writable: false },
      '/h/.config/opencode/AGENTS.md': link('/h/dotfiles'),
      '/h/dotfiles': dir,
    });
    expect(await safeTarget('/h/.claude/settings.json', fs, notes)).toBe('/h/dotfiles/claude.json');
    expect(notes).toEqual(['/h/.claude/settings.json is a symbolic link: the install edits its target /h/dotfiles/claude.json in place and keeps the link']);
    expect(await refusal(safeTarget('/h/.gemini/settings.json', { ...fs, realpath: async () => null }, []))).toMatch(
      /is a symbolic link to a file that does not exist$/,
    );
    expect(await refusal(safeTarget('/h/.codex/hooks.json', fs, []))).toBe('/h/dotfiles/ro.json (the target of /h/.codex/hooks.json) is read-only');
    expect(await refusal(safeTarget('/h/.config/opencode/AGENTS.md', fs, []))).toBe(
      '/h/.config/opencode/AGENTS.md links to /h/dotfiles, which is not a regular file',
    );
  });
});
