import { describe, expect, it } from 'vitest';
import { redactCredentials, redactValues, stripUrlCredentials } from '../../../protocol/index.js';

describe('credential redaction', () => {
  it.each([
    ['https://alice:ghp_x@github.com/o/r.git', 'https://github.com/o/r.git'],
    ['http://token@host:8080/r', 'http://host:8080/r'],
    ['ssh://git:secret@host/r.git', 'ssh://git@host/r.git'],
    ['git@github.com:o/r.git', 'git@github.com:o/r.git'],
    ['/srv/git/r.git', '/srv/git/r.git'],
  ])('%s → %s', (url, stripped) => {
    expect(stripUrlCredentials(url)).toBe(stripped);
  });

  it('finds credentialed URLs inside text and removes known secret values', () => {
    expect(redactCredentials("fatal: unable to access 'https://u:p4ss@h/r.git/': 401")).toBe("fatal: unable to access 'https://h/r.git/': 401");
    expect(redactValues('token=abcdefgh123 and short=abc', ['abcdefgh123', 'abc'])).toBe('token=[redacted] and short=abc');
  });
});
