import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SPOOL_DIR, SPOOLED_NAME } from '../../../protocol/event-spool.js';

/** The two writers' final names: the hook's (`<13-digit ms>-<6 hex pid><6 hex clock>`) and the installed shell line's. */
const finalName = fc
  .tuple(fc.integer({ min: 0, max: 9_999_999_999_999 }), fc.stringMatching(/^[0-9a-f]{12}$/))
  .map(([ms, unique]) => `${String(ms).padStart(13, '0')}-${unique}.json`);

describe('the spool the hooks hand payloads through', () => {
  it('lives in the state dir under spool/', () => {
    expect(SPOOL_DIR).toBe('spool');
  });

  it('the daemon takes every final name the hooks write', () => {
    fc.assert(
      fc.property(finalName, (name) => {
        expect(SPOOLED_NAME.test(name), name).toBe(true);
      }),
    );
  });

  it('and no name a hook is still writing (its dot-name), nor any other file', () => {
    fc.assert(
      fc.property(finalName, (name) => {
        expect(SPOOLED_NAME.test(`.${name}`)).toBe(false);
      }),
    );
    const name = '1764403200000-0012ab34cd56.json';
    for (const other of [
      `${name}.tmp`,
      `x${name}`,
      name.replace('.json', '.jsonl'),
      name.replace('.json', 'xjson'),
      name.replace('-', '_'),
      name.slice(1),
      `1${name}`,
      name.replace('0012ab34cd56', '0012ab34cd5'),
      name.replace('0012ab34cd56', '0012ab34cd567'),
      name.replace('0012ab34cd56', '0012AB34CD56'),
      name.replace('0012ab34cd56', '0012ab34cd5g'),
      name.replace('1764403200000', '176440320000a'),
    ]) {
      expect(SPOOLED_NAME.test(other), other).toBe(false);
    }
  });
});
