import { describe, expect, it } from 'vitest';
import { refusedAcceptHint, type RefusedAccept } from '../../../protocol/accept-hint.js';
import type { Check, TakeoverJudgement } from '../../../protocol/takeover-checks.js';

const ID = '20261205T060000Z-abcdef';
const check = (name: Check['name'], status: Check['status']): Check => ({ name, status, expected: null, observed: null, detail: '' });
const diverged = (...checks: Check[]): TakeoverJudgement => ({ code: 'diverged', checks });
const hint = (judgement: TakeoverJudgement, over: Partial<RefusedAccept> = {}) =>
  refusedAcceptHint({ cycle: ID, leg: 'out', from: null, judgement, checkout: 'would_move', ...over });

describe('refusedAcceptHint: the first failed check decides, the hint ends in the command that then works', () => {
  it('a stale handoff is not fixed here: ask the source for a fresh one', () => {
    expect(hint({ code: 'stale', checks: [check('recency', 'failed'), check('identity', 'failed')] })).toBe(
      'ask the source for a fresh handoff (`handoff now` there)',
    );
  });

  it('another repository: accept in a clone, through the remote given or origin', () => {
    const other = diverged(check('integrity', 'ok'), check('recency', 'failed'), check('identity', 'failed'), check('commit', 'failed'));
    expect(hint(other)).toBe(`this checkout is another repository: run \`handoff accept ${ID} --from origin\` in a clone of the source's repository`);
    expect(hint(other, { from: 'upstream', leg: 'return' })).toBe(
      `this checkout is another repository: run \`handoff accept ${ID} --from upstream\` in a clone of the source's repository`,
    );
  });

  it('a missing commit: a clone whose remote holds it, or the remote given checked and the same accept again', () => {
    const missing = diverged(check('identity', 'warning'), check('commit', 'failed'));
    expect(hint(missing)).toBe(`the checkpoint is not here: in a clone whose remote holds it, run \`handoff accept ${ID} --from origin\``);
    expect(hint(missing, { leg: 'return' })).toBe(
      `the checkpoint is not here: in a clone whose remote holds it, run \`handoff accept ${ID} --return --from origin\``,
    );
    expect(hint(missing, { from: 'upstream' })).toBe(
      `check that 'upstream' is reachable and holds the cycle's branch, then run \`handoff accept ${ID} --from upstream\` again`,
    );
  });

  it('a work tree git refuses to move: what git names, then the same accept', () => {
    expect(hint(diverged(check('work_tree', 'failed')), { checkout: 'refused_git', leg: 'return' })).toBe(
      `fix what git names, then run \`handoff accept ${ID} --return\`; nothing was written`,
    );
  });

  it('changes since the freeze on the return leg: put them aside; the returned work waits on its branch', () => {
    expect(hint(diverged(check('work_tree', 'failed')), { checkout: 'refused_dirty', leg: 'return' })).toBe(
      `nothing was moved or written: put what changed here since the freeze aside (the check lists what differs from the returned tree), so the tree is as frozen again, then run \`handoff accept ${ID} --return\`; until then the returned work stays on the branch handoff/${ID}-return`,
    );
  });

  it('changes of the receiver on the out leg: the stash and the accept in one line, or a fresh clone', () => {
    expect(hint(diverged(check('work_tree', 'failed')), { checkout: 'refused_dirty', from: 'origin' })).toBe(
      `nothing was written: put your changes aside and accept, \`git stash push --include-untracked && handoff accept ${ID} --from origin\` (\`git stash pop\` brings them back later), or run \`handoff accept ${ID} --from origin\` in a fresh clone`,
    );
  });

  it('any other failed check: real state wins, reconcile first', () => {
    expect(hint(diverged(check('work_tree', 'warning'), check('instructions', 'failed')))).toBe(
      `real state wins: reconcile the checkout with the checkpoint, then run \`handoff accept ${ID}\``,
    );
    expect(hint(diverged())).toBe(`real state wins: reconcile the checkout with the checkpoint, then run \`handoff accept ${ID}\``);
  });
});
