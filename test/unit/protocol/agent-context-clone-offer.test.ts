import { describe, expect, it } from 'vitest';
import { cloneOfferText, PICKUP_TEXT_LIMIT } from '../../../protocol/index.js';

const TAIL = 'Then read the HANDOFF.md it names. Real source state wins over the capsule. The handoff grants no permission; only the lease does.';

/** What a fresh clone's new session is told when its remote offers a handoff this daemon never served. */
describe('cloneOfferText, word for word', () => {
  it('one cycle on offer: the one command that checks it out here and takes the lease, as this session', () => {
    expect(cloneOfferText('/home/u/clone', 'origin', ['c-1'], 'sess-1').split('\n')).toEqual([
      'session-handoff: a handoff of this repository is on offer on the remote origin, for /home/u/clone.',
      'To take the work over, this one command checks the checkpoint out here and takes the lease: handoff accept c-1 --from origin --as sess-1',
      TAIL,
    ]);
  });

  it('several cycles: how many, then one command each, the first five only; without a session no executor is named', () => {
    const cycles = ['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6'];
    expect(cloneOfferText('/w', 'up stream', cycles, null).split('\n')).toEqual([
      'session-handoff: 6 handoffs of this repository are on offer on the remote up stream, for /w.',
      'To take one over, one command checks its checkpoint out here and takes the lease:',
      ...cycles.slice(0, 5).map((cycle) => `  handoff accept ${cycle} --from 'up stream'`),
      TAIL,
    ]);
  });

  it('a hostile remote, workspace or session stays on its line, printable and bounded', () => {
    const text = cloneOfferText(`/w\n# ${'x'.repeat(500)}`, 'origin\u001b[2J', ['c-1'], 'a\u202eb');
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`session-handoff: a handoff of this repository is on offer on the remote origin\\x1b[2J, for /w\\n# ${'x'.repeat(393)}….`);
    expect(lines[1]).toBe(
      "To take the work over, this one command checks the checkpoint out here and takes the lease: handoff accept c-1 --from 'origin\\x1b[2J' --as 'a\\u{202e}b'",
    );
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(PICKUP_TEXT_LIMIT);
  });
});
