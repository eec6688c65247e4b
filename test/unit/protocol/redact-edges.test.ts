import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayRemote, isLocalRemote, redactCredentials } from '../../../protocol/redact.js';

/** Where each form's parts end: the `@`, the host's colon, the brackets, a query or fragment mark. */
describe('displayRemote: the userinfo, host and query a remote hides in odd places', () => {
  it.each([
    // A raw `/` in a token ends the URL's authority early: the `@` in the path still ends the userinfo.
    ['https://tok/en@h/r.git', 'https://h/r.git'],
    // With userinfo the parser found, an `@` further on is the path's own.
    ['https://u@h/a@b', 'https://h/a@b'],
    ['https://:pw@h/a@b', 'https://h/a@b'],
    // scp-like: the userinfo ends at the last `@` before the path's first slash, not after it.
    ['git@h:o/a@b.git', 'h:o/a@b.git'],
    ['u:p@host', 'host'],
    // A query or fragment mark is cut in the path, never in the host.
    ['u:pppppp@h?:r', 'h?:r'],
    ['git@h:?b', 'h:'],
    ['[u@h]:a?b', '[h]:a'],
    ['[u@h:2?2]:r.git', '[h:2?2]:r.git'],
    ['[h:2?2]:r', '[h:2?2]:r'],
    // A local path is shown as it is, `#` and all.
    ['/srv/a#b/r.git', '/srv/a#b/r.git'],
  ])('%s → %s', (remote, shown) => {
    expect(displayRemote(remote)).toBe(shown);
  });

  it('a colon in a host:path remote makes it scp-like, whatever brackets its path holds', () => {
    expect(isLocalRemote('host:dir]x')).toBe(false);
  });

  it('no `transport::` or `scheme://` remote is local, whatever follows', () => {
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9+.-]{0,8}$/);
    fc.assert(
      fc.property(name, fc.constantFrom('::', '://'), fc.string(), (scheme, mark, rest) => {
        expect(isLocalRemote(`${scheme}${mark}${rest}`)).toBe(false);
      }),
    );
  });
});

describe('redactCredentials: a token without a closer is the whole URL', () => {
  it.each([
    ['at https://h/r?t=secret', 'at https://h/r'],
    ['see https://h/undefined?access_token=x', 'see https://h/undefined'],
  ])('%s → %s', (text, shown) => {
    expect(redactCredentials(text)).toBe(shown);
  });
});
