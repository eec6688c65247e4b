import { join } from 'node:path';
import type { StatusView } from '../../../protocol/index.js';
import { formatDuration, shortSha, type Renderer } from './format.js';

type Summary = Readonly<Record<string, unknown>>;
const summaryOf = (steps: Readonly<Record<string, { readonly at: string; readonly summary?: unknown }>>, step: string): Summary =>
  (steps[step]?.summary as Summary | undefined) ?? {};

/**
 * `handoff now`, `resume` and `return` once the drain finished: what was made (the branch, where it
 * was pushed), where HANDOFF.md is, and who acts next — the words a person needs to hand over.
 */
export const renderDrainResult: Renderer<StatusView> = (view, code) => {
  const cycle = view.cycle;
  if (code !== 'handoff_ready' || cycle === null) {
    // The drain ended without a handoff: someone cancelled it, or the cycle moved on meanwhile.
    return [
      `the drain ended without a handoff: ${view.workspace} is in ${view.state}`,
      `next: ${view.next[0]?.why ?? '`handoff status` says where it stands'}`,
    ].join('\n');
  }
  const returning = view.state === 'RETURN_HANDOFF_READY';
  const drain = returning ? cycle.return_drain : cycle.drain;
  const checkpoint = returning ? cycle.return_checkpoint : cycle.checkpoint;
  const steps = drain?.steps ?? {};
  const pack = summaryOf(steps, 'package');
  const publish = summaryOf(steps, 'publish');
  const snapshot = summaryOf(steps, 'snapshot');
  const home = returning ? (cycle.receiver?.root ?? view.workspace) : view.workspace;
  // The package names its files relative to the cycle's directory (`return/HANDOFF.md` for the return leg).
  const handoff = join(
    home,
    '.session-handoff',
    cycle.id,
    typeof pack['handoff'] === 'string' ? pack['handoff'] : returning ? 'return/HANDOFF.md' : 'HANDOFF.md',
  );
  const took = drain === null || drain === undefined ? null : (Date.parse(steps['offer']?.at ?? '') - Date.parse(drain.started_at)) / 1000;
  const lines = [
    `${returning ? 'the return of cycle' : 'cycle'} ${cycle.id} is ready to hand over${took !== null && Number.isFinite(took) ? ` (drained in ${formatDuration(took)})` : ''}`,
  ];
  if (checkpoint !== null) {
    const branch = checkpoint.ref?.replace(/^refs\/heads\//, '') ?? 'none';
    const where =
      checkpoint.mechanism === 'handoff_branch'
        ? `pushed to ${typeof publish['remote'] === 'string' ? publish['remote'] : 'the remote'}${checkpoint.verified ? ' and read back' : ''}`
        : checkpoint.mechanism === 'local_ref'
          ? 'kept on this machine only (no remote to push to)'
          : 'nothing changed in the source: the capsule alone carries the work';
    lines.push(`  branch    ${branch} at ${shortSha(checkpoint.commit)}, ${where}`);
  }
  const withheld = Number(snapshot['withheld'] ?? 0);
  if (withheld > 0) lines.push(`  withheld  ${withheld} file(s) with a likely secret were not pushed: HANDOFF.md names them`);
  lines.push(`  read      ${handoff}`);
  lines.push(`next: ${view.next[0]?.why ?? '`handoff status` says who acts next'}`);
  return lines.join('\n');
};
