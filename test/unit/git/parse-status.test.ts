import { describe, expect, it } from 'vitest';
import { parseStatus } from '../../../daemon/git/index.js';

describe('parseStatus (git status --porcelain=v2 -z)', () => {
  it('sorts staged, unstaged and untracked, keeps spaces in paths and follows renames', () => {
    const records = [
      '1 MM N... 100644 100644 100644 aaa bbb src/app.ts',
      '1 A. N... 000000 100644 100644 000 ccc src/new file.ts',
      '2 R. N... 100644 100644 100644 ddd ddd R100 docs/new.md',
      'docs/old.md',
      'u UU N... 100644 100644 100644 100644 e f g conflict.txt',
      '? notes.md',
    ];
    expect(parseStatus(`${records.join('\0')}\0`)).toEqual({
      staged: ['src/app.ts', 'src/new file.ts', 'docs/new.md', 'conflict.txt'],
      unstaged: ['src/app.ts', 'conflict.txt'],
      untracked: ['notes.md'],
    });
  });
});
