import type { StatusView } from './status-view.js';
import type { WorkspaceState } from './workspace-machine.js';

/**
 * Which workspace needs a person first: a stopped drain, then a drain under way, then work on offer
 * waiting for a receiver, then pressure building, then work held elsewhere, then the quiet ones.
 * Only type imports: the dashboard page loads the compiled module itself, so the page and the CLI
 * order workspaces by this one rule.
 */
const STAGE_RANK: Readonly<Record<WorkspaceState, number>> = {
  EVACUATE: 1,
  HANDOFF_READY: 2,
  RETURN_HANDOFF_READY: 2,
  PREPARE: 3,
  TAKEOVER: 4,
  // The quiet ones, equal: a closed cycle (work back for review) is no less worth a look than an idle checkout.
  NORMAL: 5,
  CLOSED: 5,
};

export type UrgencyInput = Pick<StatusView, 'workspace' | 'state' | 'blocked' | 'pressure'> & Partial<Pick<StatusView, 'cycle'>>;

/** 0 is the most urgent: a blocked drain, whatever its stage. */
export function urgencyRank(view: Pick<StatusView, 'state' | 'blocked'>): number {
  return view.blocked !== null ? 0 : STAGE_RANK[view.state];
}

/**
 * Most urgent first; within a rank the higher pressure first (unknown last), then a workspace with a
 * cycle before one without (a closed primary before the receiver's empty checkout), then by path in
 * code-unit order (as protocol/code-unit-order.ts, written out: the dashboard page loads this file alone).
 */
export function compareUrgency(a: UrgencyInput, b: UrgencyInput): number {
  const byPath = a.workspace < b.workspace ? -1 : a.workspace > b.workspace ? 1 : 0;
  const byCycle = Number(b.cycle != null) - Number(a.cycle != null);
  return urgencyRank(a) - urgencyRank(b) || (b.pressure?.percent ?? -1) - (a.pressure?.percent ?? -1) || byCycle || byPath;
}
