import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byCodeUnits } from '../../../protocol/code-unit-order.js';
import { compareUrgency } from '../../../protocol/urgency.js';

describe('byCodeUnits: names, ids and paths in one order in every locale', () => {
  it('is the order of sort() without a comparator', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' })), (texts) => {
        expect([...texts].sort(byCodeUnits)).toEqual([...texts].sort());
      }),
    );
  });

  it('answers -1, 0 or 1 as a comparator must (sort() itself reads only the sign of "less")', () => {
    expect([byCodeUnits('a', 'b'), byCodeUnits('b', 'a'), byCodeUnits('a', 'a')]).toEqual([-1, 1, 0]);
  });

  it('puts upper case before lower case, as git orders names, where a collator would not', () => {
    expect(['b', 'B', 'a', 'A'].sort(byCodeUnits)).toEqual(['A', 'B', 'a', 'b']);
  });

  it('orders workspaces of the same urgency and pressure by path the same way (protocol/urgency.ts writes it out)', () => {
    const at = (workspace: string) => ({ workspace, state: 'NORMAL' as const, blocked: null, pressure: null });
    const paths = ['/w/b', '/w/B', '/w/a', '/w/A'];
    expect(
      paths
        .map(at)
        .sort(compareUrgency)
        .map((view) => view.workspace),
    ).toEqual([...paths].sort(byCodeUnits));
  });
});
