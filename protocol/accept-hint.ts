import { acceptCommand } from './accept-command.js';
import type { ReceiverObservation, TakeoverJudgement } from './takeover-checks.js';

export interface RefusedAccept {
  readonly cycle: string;
  readonly leg: 'out' | 'return';
  /** The remote named with `--from`, or null. */
  readonly from: string | null;
  readonly judgement: TakeoverJudgement;
  /** Whether the receiver's tree could be moved, and why not. */
  readonly checkout: ReceiverObservation['checkout'];
}

/**
 * What to do about a verify or accept that did not verify: the first failed check decides, and the
 * hint ends in the command that works once that is done — never a flag that was already given or
 * cannot help (a checkout of another repository is not fixed by moving its tree).
 */
export function refusedAcceptHint(refused: RefusedAccept): string {
  const { cycle, leg, from, judgement, checkout } = refused;
  const again = acceptCommand(cycle, { leg, from });
  if (judgement.code === 'stale') return 'ask the source for a fresh handoff (`handoff now` there)';
  const failed = judgement.checks.find((c) => c.status === 'failed' && c.name !== 'recency');
  switch (failed?.name) {
    case 'identity':
      return `this checkout is another repository: run \`${acceptCommand(cycle, { from: from ?? 'origin' })}\` in a clone of the source's repository`;
    case 'commit':
      return from === null
        ? `the checkpoint is not here: in a clone whose remote holds it, run \`${acceptCommand(cycle, { leg, from: 'origin' })}\``
        : `check that '${from}' is reachable and holds the cycle's branch, then run \`${again}\` again`;
    case 'work_tree':
      return workTreeHint(cycle, leg, again, checkout);
    default:
      return `real state wins: reconcile the checkout with the checkpoint, then run \`${again}\``;
  }
}

function workTreeHint(cycle: string, leg: 'out' | 'return', again: string, checkout: ReceiverObservation['checkout']): string {
  if (checkout === 'refused_git') return `fix what git names, then run \`${again}\`; nothing was written`;
  if (leg === 'return')
    return `nothing was moved or written: put what changed here since the freeze aside (the check lists what differs from the returned tree), so the tree is as frozen again, then run \`${again}\`; until then the returned work stays on the branch handoff/${cycle}-return`;
  return `nothing was written: put your changes aside and accept, \`git stash push --include-untracked && ${again}\` (\`git stash pop\` brings them back later), or run \`${again}\` in a fresh clone`;
}
