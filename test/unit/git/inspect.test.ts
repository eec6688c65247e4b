import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectRepository } from '../../../daemon/git/index.js';
import { configuredUrls } from '../../../daemon/git/inspect.js';
import { git, tempDir, tempRepo } from '../../support/git.js';

/** What git itself says, one question per call (what inspectRepository asked before one status answered them all). */
function asked(root: string) {
  const optional = (...args: string[]) => {
    try {
      return git(root, ...args);
    } catch {
      return null;
    }
  };
  const upstream = optional('rev-parse', '--abbrev-ref', '@{u}');
  const counts = upstream === null ? null : optional('rev-list', '--left-right', '--count', 'HEAD...@{u}')?.split(/\s+/).map(Number);
  return {
    head: optional('rev-parse', '-q', '--verify', 'HEAD^{commit}'),
    branch: optional('symbolic-ref', '--short', '-q', 'HEAD'),
    upstream,
    ahead: counts?.[0] ?? null,
    behind: counts?.[1] ?? null,
  };
}

/** A clone whose main is one commit ahead of and one behind its upstream, and has a second remote. */
function diverged(): string {
  const upstream = tempRepo();
  const root = join(tempDir('clone'), 'work');
  git(upstream, 'branch', 'feature');
  git(tempDir('x'), 'clone', '-q', upstream, root);
  git(root, 'remote', 'add', 'backup', upstream);
  writeFileSync(join(upstream, 'theirs.txt'), 'theirs\n');
  git(upstream, 'add', '.');
  git(upstream, 'commit', '-q', '-m', 'theirs');
  git(root, 'fetch', '-q', 'origin');
  writeFileSync(join(root, 'ours.txt'), 'ours\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'ours');
  return root;
}

describe('inspectRepository reads HEAD, branch, upstream and ahead/behind from one git status', () => {
  const cases: Record<string, () => string> = {
    'a branch ahead of and behind its upstream': diverged,
    'a detached HEAD': () => {
      const root = diverged();
      git(root, 'checkout', '-q', '--detach');
      return root;
    },
    'a branch named (detached)': () => {
      const root = diverged();
      git(root, 'checkout', '-q', '-b', '(detached)');
      return root;
    },
    'an upstream whose ref is gone': () => {
      const root = diverged();
      git(root, 'checkout', '-q', '-b', 'topic', '--track', 'origin/feature');
      git(root, 'update-ref', '-d', 'refs/remotes/origin/feature');
      return root;
    },
    'an unborn branch': () => {
      const root = tempDir('unborn');
      git(root, 'init', '-q', '-b', 'main');
      return root;
    },
  };
  for (const [name, make] of Object.entries(cases)) {
    it(`says what git says one question at a time: ${name}`, async () => {
      const root = make();
      const observed = await inspectRepository(root);
      expect({ head: observed.head, branch: observed.branch, upstream: observed.upstream, ahead: observed.ahead, behind: observed.behind }).toEqual(
        asked(root),
      );
    });
  }

  it('chooses the upstream remote, and the counts match', async () => {
    const root = diverged();
    expect(await inspectRepository(root)).toMatchObject({ remote: 'origin', branch: 'main', upstream: 'origin/main', ahead: 1, behind: 1 });
  });
});

describe("the remote's URL as configured, from one git config of every remote's URLs", () => {
  it('is the one `git config --get remote.<name>.url` gives: the last of several, before insteadOf, for a dotted name', async () => {
    const root = tempRepo();
    git(root, 'remote', 'add', 'up.stream', 'https://example.invalid/first.git');
    git(root, 'config', '--add', 'remote.up.stream.url', 'https://example.invalid/second.git');
    git(root, 'config', 'url.https://rewritten.invalid/.insteadOf', 'https://example.invalid/');
    git(root, 'remote', 'add', 'other', 'https://example.invalid/other.git');
    expect(git(root, 'config', '--get', 'remote.up.stream.url')).toBe('https://example.invalid/second.git');
    git(root, 'checkout', '-q', '-b', 'topic');
    git(root, 'config', 'branch.topic.remote', 'up.stream');
    git(root, 'config', 'branch.topic.merge', 'refs/heads/main');
    git(root, 'update-ref', 'refs/remotes/up.stream/main', 'HEAD');
    expect(await inspectRepository(root)).toMatchObject({ remote: 'up.stream', remote_url: 'https://example.invalid/second.git' });
  });

  it('parses names and values git prints with -z (a newline in a value stays in it), and nothing from other keys', () => {
    const output = 'remote.origin.url\nhttps://a.invalid/x.git\0remote.origin.url\nhttps://b.invalid/x.git\0remote.a.b.url\n/srv/line\nbreak\0remote..url\nx\0';
    expect(configuredUrls(output)).toEqual(
      new Map([
        ['origin', 'https://b.invalid/x.git'],
        ['a.b', '/srv/line\nbreak'],
      ]),
    );
    expect(configuredUrls(null)).toEqual(new Map());
  });
});
