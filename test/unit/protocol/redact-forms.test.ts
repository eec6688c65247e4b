import { describe, expect, it } from 'vitest';
import { displayRemote, isLocalRemote, redactCredentials, redactValues } from '../../../protocol/redact.js';

describe('displayRemote: the edges of each form', () => {
  it.each([
    // A file URL keeps an `@` of its path: it has no userinfo to hide.
    ['file:///srv/a@b/r.git', 'file:///srv/a@b/r.git'],
    ['FILE:///srv/a@b/r.git', 'file:///srv/a@b/r.git'],
    ['host:r.git#frag', 'host:r.git'],
    ['host:r.git?x#y', 'host:r.git'],
    ['u@host:dir/r.git', 'host:dir/r.git'],
    ['[u@h]:r.git', '[h]:r.git'],
    ['[h]:r.git', '[h]:r.git'],
    [':r.git', ':r.git'],
    ['dir/a:b', 'dir/a:b'],
    ['ext::u@h:r.git', 'ext::h:r.git'],
  ])('%s → %s', (remote, shown) => {
    expect(displayRemote(remote)).toBe(shown);
  });

  it('a colon before the first slash is scp-like; after it, a local path', () => {
    expect([isLocalRemote(':r.git'), isLocalRemote('dir/a:b'), isLocalRemote('[h]:r'), isLocalRemote('git+ssh://h/r')]).toEqual([true, true, false, false]);
  });
});

describe('redactCredentials: a token in quotes or brackets ends at its last closer', () => {
  it.each([
    ['"https://u:p@h/r"', '"https://h/r"'],
    ['`https://u:p@h/r`.', '`https://h/r`.'],
    ['[https://u:p@h/r]', '[https://h/r]'],
    ['{https://u:p@h/r}', '{https://h/r}'],
    // An opener with no closer inside the token: the whole token is the URL.
    ["'https://u:p@h/r", "'https://h/r"],
    ['x https://u:p@h/r y https://v:q@g/s', 'x https://h/r y https://g/s'],
  ])('%s → %s', (text, shown) => {
    expect(redactCredentials(text)).toBe(shown);
  });

  it('known secret values of 8 characters or more are replaced everywhere, shorter ones are not', () => {
    expect(redactValues('a 12345678 b 12345678 c 1234567', ['12345678', '1234567'])).toBe('a [redacted] b [redacted] c 1234567');
  });
});
