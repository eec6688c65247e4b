import { formatCycleId } from '../cycle-id.js';
import { DRAIN_STEPS, newDrain, type DrainProgress } from '../drain-plan.js';
import { iso, type Cycle, type Trigger, type WorkspaceContext } from './context.js';

export function newCycle(context: WorkspaceContext, trigger: Trigger, noWait = false): Cycle {
  return {
    id: formatCycleId(context.now, context.entropy),
    started_at: iso(context.now),
    trigger,
    profile: context.profile,
    checkpoint: null,
    return_checkpoint: null,
    drain: newDrain('out', noWait, iso(context.now)),
    receiver: null,
    return_drain: null,
    remote: null,
  };
}

/**
 * The return leg's drain: new, or — after a cancelled return — the next revision of the abandoned one,
 * chained to its snapshot and manifests like a revision made because the work tree moved.
 */
export function returnDrain(cycle: Cycle, noWait: boolean, at: string): DrainProgress {
  const fresh = newDrain('return', noWait, at);
  const old = cycle.abandoned_return ?? null;
  if (old === null) return fresh;
  const commit = old.steps.snapshot?.summary['commit'];
  return {
    ...fresh,
    revision: old.revision + 1,
    revision_at: at,
    manifests: old.manifests,
    previous_commit: typeof commit === 'string' ? commit : old.previous_commit,
  };
}

/** What `handoff cancel` keeps of an ended drain: the checkpoint ref it made, for the record. */
export function keptRef(drain: DrainProgress | null): string | null {
  const ref = drain?.steps.snapshot?.summary['ref'];
  return typeof ref === 'string' ? ref : null;
}

/** A drain whose lease offer went out through a git remote: cancelling here could not withdraw it there. */
function offeredThroughRemote(drain: DrainProgress): boolean {
  const head = drain.steps.offer?.summary['lease_head'];
  return typeof head === 'string' && head !== '';
}

/** The holder may end the cycle here with `handoff close --one-way`. */
export function closableOneWay(cycle: Cycle): boolean {
  return cycle.profile === 'one-way' || (cycle.return_drain === null && (cycle.abandoned_return ?? null) !== null);
}

/** The lease of this cycle is (or is being) offered through a git remote: only that chain can withdraw it. */
export function offerTravels(cycle: Cycle): boolean {
  // A return leg is offered through the remote only once its own offer step published it; the out
  // leg's offer (cycle.remote) was taken by the receiver and is not what a cancelled return withdraws.
  if (cycle.return_drain !== null) return offeredThroughRemote(cycle.return_drain);
  return cycle.remote !== null || offeredThroughRemote(cycle.drain);
}

/** A drain's identity for the runner's reports: the cycle, the leg and when that drain began. */
export function drainKey(cycle: Cycle, drain: DrainProgress): string {
  return `${cycle.id}/${drain.leg}/${drain.started_at}`;
}

/** Applies `change` to the running drain; the machine only calls it where one runs (EVACUATE, TAKEOVER.returning). */
export function withDrain(context: WorkspaceContext, change: (drain: DrainProgress) => DrainProgress): Cycle | null {
  const cycle = context.cycle;
  if (cycle === null) return null;
  return context.stage === 'TAKEOVER' && cycle.return_drain !== null
    ? { ...cycle, return_drain: change(cycle.return_drain) }
    : { ...cycle, drain: change(cycle.drain) };
}

/** The first unfinished step of a drain (null when it waits for the agent or has finished). */
export function currentStep(drain: DrainProgress): string | null {
  if (drain.waited === null) return null;
  return DRAIN_STEPS.find((step) => drain.steps[step] === undefined) ?? null;
}
