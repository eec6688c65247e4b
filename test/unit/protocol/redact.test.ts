import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayRemote, isLocalRemote, redactCredentials, redactValues } from '../../../protocol/index.js';

describe('displayRemote: one display form, by parsing', () => {
  it.each([
    ['https://alice:ghp_x@github.com/o/r.git', 'https://github.com/o/r.git'],
    ['http://token@host:8080/r', 'http://host:8080/r'],
    ['ssh://git:secret@host/r.git', 'ssh://host/r.git'],
    ['ssh://git@host:22/r.git', 'ssh://host:22/r.git'],
    ['https://h/r.git?access_token=abc#frag', 'https://h/r.git'],
    ['https://u:p ss\'"@h/r', 'https://h/r'],
    ['https://u:p@ss@h/r', 'https://h/r'],
    ['file:///srv/r.git?access_token=abc', 'file:///srv/r.git'],
    ['http://[::1]:8/x?t=1', 'http://[::1]:8/x'],
    ['git@github.com:o/r.git', 'github.com:o/r.git'],
    ['[git@h:22]:r.git', '[h:22]:r.git'],
    ['git@[::1]:r.git', '[::1]:r.git'],
    ['user:pass@host:path/x', 'host:path/x'],
    ['host:r.git?access_token=abc', 'host:r.git'],
    ['corp:repo.git', 'corp:repo.git'],
    ['/srv/git/r.git', '/srv/git/r.git'],
    ['./a:b', './a:b'],
    ['persistent-https::https://u:p@h/r', 'persistent-https::https://h/r'],
  ])('%s → %s', (remote, shown) => {
    expect(displayRemote(remote)).toBe(shown);
  });

  it('shows nothing of a URL the parser cannot read (a slash in a raw password)', () => {
    expect(displayRemote('https://u:a/b@h/r')).toBe('https://[address not shown: not a valid URL]');
  });

  it('passes each URL-looking token of free text through the parser', () => {
    expect(redactCredentials("fatal: unable to access 'https://u:p4ss@h/r.git/': 401")).toBe("fatal: unable to access 'https://h/r.git/': 401");
    expect(redactCredentials('see <http://h/x?access_token=t0k3n> and (ssh://me:pw@h/r)')).toBe('see <http://h/x> and (ssh://h/r)');
    expect(redactValues('token=abcdefgh123 and short=abc', ['abcdefgh123', 'abc'])).toBe('token=[redacted] and short=abc');
  });

  // Every printable ASCII character, the ones a pattern trips on (' " space / ? # @ : %) included.
  const secret = fc.string({ unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))), minLength: 10, maxLength: 40 });

  it('never shows a password or a query token, whatever characters they hold', () => {
    fc.assert(
      fc.property(secret, secret, fc.constantFrom('https', 'http', 'ssh', 'git+ssh'), (password, token, scheme) => {
        const url = `${scheme}://user:${encodeURIComponent(password)}@example.invalid/o/r.git?access_token=${encodeURIComponent(token)}`;
        const shown = displayRemote(url);
        const text = redactCredentials(`fatal: unable to access '${url}': denied`);
        for (const value of [password, encodeURIComponent(password), token, encodeURIComponent(token)]) {
          expect(shown).not.toContain(value);
          expect(text).not.toContain(value);
        }
        expect(shown).toBe(`${scheme}://example.invalid/o/r.git`);
      }),
      { numRuns: 500 },
    );
  });

  it('never shows a raw (unencoded) password either', () => {
    fc.assert(
      fc.property(secret, (password) => {
        const shown = displayRemote(`https://user:${password}@example.invalid/r.git`);
        expect(shown.includes(password)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('isLocalRemote', () => {
  it('a path on this machine, relative or absolute; not a URL, an scp-like remote or a helper', () => {
    for (const local of ['../remote.git', '/srv/git/r.git', 'remote.git', './a:b/r.git']) expect(isLocalRemote(local), local).toBe(true);
    for (const other of ['https://h/r.git', 'file:///srv/r.git', 'git@h:r.git', 'h:r.git', 'ext::ssh h r']) expect(isLocalRemote(other), other).toBe(false);
  });
});
