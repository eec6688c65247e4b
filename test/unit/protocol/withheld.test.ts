import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holdsMarker, includeSecretCommand, redactHits, withheldBlock, withheldMarker } from '../../../protocol/index.js';
import type { Manifest } from '../../../schemas/index.js';
import { manifestWith } from './manifest-fixture.js';

describe('redactHits', () => {
  it('no character of any secret survives, every other character does, in order', () => {
    const hitArb = fc.record({ rule: fc.constantFrom('aws', 'npm'), start: fc.nat({ max: 40 }), length: fc.nat({ max: 8 }) });
    fc.assert(
      fc.property(fc.array(hitArb, { maxLength: 6 }), (specs) => {
        const hits = specs.map((s) => ({ rule: s.rule, start: s.start, end: s.start + s.length }));
        const secret = (i: number) => hits.some((h) => i >= h.start && i < h.end);
        const text = Array.from({ length: 48 }, (_, i) => (secret(i) ? 'X' : String.fromCharCode(97 + (i % 26)))).join('');
        const result = redactHits(text, hits);
        expect(result).not.toContain('X');
        expect(result.replaceAll(/\[withheld: secretlint rule (aws|npm)\]/g, '')).toBe(text.replaceAll('X', ''));
        expect(holdsMarker(result)).toBe(text.includes('X'));
      }),
      { numRuns: 300 },
    );
  });

  it("overlapping hits merge into one marker, the first rule's; touching ones stay two; empty ones are no hit", () => {
    expect(
      redactHits('ab SECRETSECRET cd', [
        { rule: 'second', start: 8, end: 15 },
        { rule: 'first', start: 3, end: 10 },
      ]),
    ).toBe('ab [withheld: secretlint rule first] cd');
    expect(
      redactHits('xAAAABBBBy', [
        { rule: 'b', start: 5, end: 9 },
        { rule: 'a', start: 1, end: 5 },
      ]),
    ).toBe(`x${withheldMarker('a')}${withheldMarker('b')}y`);
    expect(redactHits('abc', [{ rule: 'x', start: 1, end: 1 }])).toBe('abc');
    // Of two hits starting together, the longer one is the marker's.
    expect(
      redactHits('xSECRETy', [
        { rule: 'short', start: 1, end: 3 },
        { rule: 'long', start: 1, end: 7 },
      ]),
    ).toBe(`x${withheldMarker('long')}y`);
  });
});

describe('withheldBlock', () => {
  const manifest = (fields: Partial<Manifest>): Manifest => ({ ...manifestWith(null), ...fields });
  const scan = (fields: Partial<NonNullable<Manifest['secret_scan']>>) => ({ allow_list: 'absent' as const, allowed: [], unscanned: [], ...fields });

  it('says nothing when the scan had nothing to say', () => {
    expect(withheldBlock(manifest({}))).toEqual([]);
    expect(withheldBlock(manifest({ withheld: [], secret_scan: scan({}) }))).toEqual([]);
  });

  it('lists withheld files with rule and reason, and the command that includes each one on purpose', () => {
    const lines = withheldBlock(
      manifest({
        withheld: [
          { path: ".env's", rule: 'aws', reason: 'an AWS key' },
          { path: `keys-${withheldMarker('npm')}`, rule: 'npm', reason: 'a token in the name' },
        ],
      }),
    );
    expect(lines[0]).toBe('## Withheld: files that hold a secret');
    expect(lines).toContain("- `.env's`: `aws`, `an AWS key`");
    expect(lines).toContain("mkdir -p .session-handoff && printf '%s\\n' '.env'\\''s' >> .session-handoff/allow-secrets");
    // A name that holds a secret cannot be included: it gets no command.
    expect(lines.filter((line) => line.startsWith('mkdir -p'))).toHaveLength(1);
  });

  it('names files pushed on purpose, files pushed unscanned and why, and an allow list it ignored', () => {
    const lines = withheldBlock(
      manifest({
        secret_scan: scan({
          allow_list: 'ignored',
          allowed: ['config/dev.env'],
          unscanned: [
            { path: 'logo.png', why: 'binary' },
            { path: 'dump.sql', why: 'too_large' },
            { path: 'locked', why: 'unreadable' },
          ],
        }),
      }),
    );
    expect(lines[0]).toBe('## Secret scan');
    expect(lines).toContain('- `config/dev.env`');
    expect(lines).toContain('- `logo.png`: binary');
    expect(lines).toContain('- `dump.sql`: larger than secret_scan.max_file_bytes');
    expect(lines).toContain('- `locked`: unreadable by the daemon (git could not add it either)');
    expect(lines.join('\n')).toMatch(/allow-secrets` was ignored: it is tracked or in a commit/);
    expect(lines.some((line) => line.startsWith('mkdir -p'))).toBe(false);
    expect(withheldBlock(manifest({ secret_scan: scan({ allow_list: 'ignored' }) }))[0]).toBe('## Secret scan');
  });

  it('the include command quotes the path as the shell reads it', () => {
    expect(includeSecretCommand('a b')).toBe("mkdir -p .session-handoff && printf '%s\\n' 'a b' >> .session-handoff/allow-secrets");
  });
});
