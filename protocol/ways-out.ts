import { acceptCommand, offeredAcceptWords } from './accept-command.js';
import type { LeaseState } from './lease-rules.js';
import { closableOneWay, offerTravels, runningDrain, type Cycle, type WorkspaceState } from './workspace-machine.js';

/**
 * The ways out of every state: what `handoff status` prints under "next", as data. docs/concepts.md
 * has the same table ("Ways out"); the model suite walks these steps from every state it reaches and
 * checks each move against that table. Pure: computed from the status alone.
 */

/** The operator commands (and the daemon's own progress, `wait`) a way out is made of. */
export type Verb =
  | 'unpause'
  | 'resume'
  | 'cancel'
  | 'drained'
  | 'wait'
  | 'now'
  | 'capsule set'
  | 'accept'
  | 'accept --return'
  | 'return'
  | 'close --one-way'
  | 'lease acquire'
  | 'lease break';

export interface NextStep {
  /** The command line to run (placeholders in capitals), or null for `wait`: the daemon acts by itself. */
  readonly command: string | null;
  readonly verb: Verb;
  /** One sentence: why, and what it does; the first step's is the status's "next" line. */
  readonly why: string;
  /** The checkout to run it in, when not the one whose status this is. */
  readonly repo: string | null;
}

/** Where a workspace stands, as the "Ways out" table names it. */
export type Situation =
  | 'paused'
  | 'NORMAL'
  | 'PREPARE'
  | 'EVACUATE (waiting for the agent)'
  | 'EVACUATE (draining)'
  | 'EVACUATE (blocked)'
  | 'HANDOFF_READY'
  | 'TAKEOVER (held)'
  | 'TAKEOVER (no holder)'
  | 'TAKEOVER (returning, waiting for the agent)'
  | 'TAKEOVER (returning)'
  | 'TAKEOVER (return blocked)'
  | 'TAKEOVER (return fenced out)'
  | 'RETURN_HANDOFF_READY'
  | 'CLOSED';

export interface WaysOutInput {
  readonly state: WorkspaceState;
  readonly paused: { readonly scope: 'global' | 'workspace' } | null;
  readonly blocked: string | null;
  readonly cycle: Cycle | null;
  readonly lease: LeaseState;
  readonly pressure: unknown;
}

const waitingForAgent = (drain: Cycle['drain']): boolean => drain.waited === null && !drain.no_wait && drain.drained_at === null;

export function situationOf(view: WaysOutInput): Situation {
  if (view.paused !== null) return 'paused';
  const cycle = view.cycle;
  switch (view.state) {
    case 'EVACUATE':
      if (view.blocked !== null) return 'EVACUATE (blocked)';
      return cycle !== null && waitingForAgent(cycle.drain) ? 'EVACUATE (waiting for the agent)' : 'EVACUATE (draining)';
    case 'TAKEOVER': {
      const ret = runningDrain(view.state, cycle);
      if (ret === null) return view.lease.holder === null ? 'TAKEOVER (no holder)' : 'TAKEOVER (held)';
      // The drain finishes fenced by the token that started it: after the lease moved, only a new `handoff return` goes on.
      // Stryker disable next-line OptionalChaining: a running return drain implies a cycle; `cycle?.` only narrows the type
      if (view.lease.holder === null || view.lease.holder.token !== cycle?.receiver?.token) return 'TAKEOVER (return fenced out)';
      if (view.blocked !== null) return 'TAKEOVER (return blocked)';
      return waitingForAgent(ret) ? 'TAKEOVER (returning, waiting for the agent)' : 'TAKEOVER (returning)';
    }
    default:
      return view.state;
  }
}

const step = (verb: Verb, command: string | null, why: string, repo: string | null = null): NextStep => ({ verb, command, why, repo });

/** The ways on from where a workspace stands, the recommended one first. */
export function nextSteps(view: WaysOutInput): NextStep[] {
  const cycle = view.cycle;
  const id = cycle?.id ?? 'CYCLE';
  const receiverRoot = cycle?.receiver?.root ?? null;
  const holder = view.lease.holder;
  // An out leg's offer is withdrawn on the remote too (a `withdrawn` record, pushed first); a return
  // leg's offer that went out through the remote is not withdrawn by the holder: the primary takes it.
  const cancel = (why: string): NextStep[] =>
    cycle !== null && cycle.return_drain !== null && offerTravels(cycle) ? [] : [step('cancel', 'handoff cancel', `or \`handoff cancel\` ${why}`)];
  const situation = situationOf(view);
  switch (situation) {
    case 'paused': {
      // Stryker disable next-line OptionalChaining: the situation 'paused' implies a pause; `?.` only narrows the type
      const global = view.paused?.scope === 'global' ? ' --global' : '';
      const out = step('unpause', `handoff unpause${global}`, `run \`handoff unpause${global}\` when it is safe to go on`);
      // Cancelling is a way out, so it works while paused; it is offered where it ends something (a return
      // leg's drain is the only one running outside the states listed).
      const ending = ['PREPARE', 'EVACUATE', 'HANDOFF_READY'].includes(view.state) || runningDrain(view.state, cycle) !== null;
      return [out, ...(ending ? cancel('ends what is under way without moving anything forward') : [])];
    }
    case 'NORMAL':
      return [
        step(
          'now',
          'handoff now',
          view.pressure === null
            ? 'nothing to do; connect an agent (`handoff install claude`) so real numbers arrive, or `handoff now` evacuates by hand'
            : 'nothing to do; `handoff now` evacuates by hand',
        ),
      ];
    case 'PREPARE':
      return [
        step('capsule set', 'handoff capsule set', 'keep working; refresh the capsule (objective, decisions, the one next action) with `handoff capsule set`'),
        step('now', 'handoff now', 'or `handoff now` evacuates at once'),
        step('cancel', 'handoff cancel', 'or `handoff cancel` goes back to NORMAL until a newer reading says otherwise'),
      ];
    case 'EVACUATE (waiting for the agent)':
      return [
        step('drained', 'handoff drained', 'the agent finishes only its current atomic step, then runs `handoff drained`'),
        ...cancel('gives this evacuation up'),
      ];
    case 'EVACUATE (draining)':
      return [step('wait', null, 'wait: the daemon is checkpointing; nothing of yours is touched'), ...cancel('gives this evacuation up')];
    case 'EVACUATE (blocked)':
      return [
        step('resume', 'handoff resume', 'fix the cause named above, then run `handoff resume`'),
        ...cancel('gives this evacuation up if the cause cannot be fixed (the cycle is recorded as abandoned)'),
      ];
    case 'HANDOFF_READY': {
      // Stryker disable next-line StringLiteral: offeredAcceptWords tells only 'return' apart; any other leg is the out leg
      const offer = offeredAcceptWords(cycle ?? { id, remote: null }, 'out');
      return [
        step('accept', offer.command, `a receiver verifies and takes over: \`${offer.command}\` ${offer.where}`),
        ...cancel('withdraws the offer if no receiver will come (on the remote too, unless a receiver took it first)'),
      ];
    }
    case 'TAKEOVER (held)': {
      // Stryker disable next-line ConditionalExpression,StringLiteral: the situation 'TAKEOVER (held)' implies a holder; the null branch only narrows the type
      const token = holder === null ? '' : ` --token ${holder.token}`;
      const ret = step('return', `handoff return${token}`, `the lease holder works, then hands back with \`handoff return\``, receiverRoot);
      const close = step(
        'close --one-way',
        `handoff close --one-way${token}`,
        'the lease holder finishes the one-way cycle with `handoff close --one-way`',
        receiverRoot,
      );
      const lost = step(
        'lease break',
        'handoff lease break --reason TEXT',
        'or, if the holder is gone, an operator records `handoff lease break --reason TEXT`',
      );
      // Taken on another machine (through the remote): it returns or closes there; this checkout follows the remote.
      if (receiverRoot === null && cycle?.remote != null) {
        // Stryker disable next-line ConditionalExpression,StringLiteral: the situation 'TAKEOVER (held)' implies a holder; the null branch only narrows the type
        const who = holder === null ? 'the holder' : `'${holder.executor}'`;
        return [
          step('wait', null, `wait: ${who} works on another machine and hands back with \`handoff return\` there; this checkout follows the remote`),
          { ...lost, why: `or, if that machine is gone for good, an operator records \`handoff lease break --reason TEXT\` (written through to the remote)` },
        ];
      }
      if (cycle?.profile === 'one-way') return [close, ret, lost];
      // After a cancelled return leg the holder may also finish here, when the return cannot be made.
      const giveUp = step(
        'close --one-way',
        close.command,
        'or, if the return cannot be made, the lease holder ends the cycle here with `handoff close --one-way`',
        receiverRoot,
      );
      return cycle !== null && closableOneWay(cycle) ? [ret, giveUp, lost] : [ret, lost];
    }
    case 'TAKEOVER (no holder)':
      return [
        step(
          'lease acquire',
          'handoff lease acquire --as NAME',
          'nobody holds the lease: the next holder takes it with `handoff lease acquire --as NAME`, then returns',
        ),
      ];
    case 'TAKEOVER (return fenced out)':
      if (holder === null) {
        return [
          step(
            'lease acquire',
            'handoff lease acquire --as NAME',
            'the lease left its holder during the return: take it with `handoff lease acquire --as NAME`, then run `handoff return`',
          ),
          ...cancel('ends the return leg'),
        ];
      }
      return [
        step(
          'return',
          `handoff return --token ${holder.token}`,
          `the lease changed hands during the return: its holder runs \`handoff return --token ${holder.token}\` to carry the return on`,
          receiverRoot,
        ),
        ...cancel('ends the return leg'),
      ];
    case 'TAKEOVER (returning, waiting for the agent)':
      return [
        step('drained', 'handoff drained', 'the agent finishes only its current atomic step, then runs `handoff drained`', receiverRoot),
        ...cancel('ends the return leg (back to TAKEOVER)'),
      ];
    case 'TAKEOVER (returning)':
      return [step('wait', null, 'wait: the return leg is checkpointing'), ...cancel('ends the return leg (back to TAKEOVER)')];
    case 'TAKEOVER (return blocked)':
      return [
        step('resume', 'handoff resume', 'fix the cause named above, then run `handoff resume`'),
        ...cancel('ends the return leg (back to TAKEOVER; the lease stays with its holder)'),
      ];
    case 'RETURN_HANDOFF_READY':
      // A cycle this workspace imported through the remote (its out leg drained elsewhere: no inspect step
      // here) goes back to the primary, which takes it on its own machine.
      if (cycle?.remote != null && cycle.drain.steps.inspect === undefined) {
        // Only the holder whose return leg drained here (its offer step pushed the return) can withdraw it.
        const withdraw = offerTravels(cycle)
          ? [
              step(
                'cancel',
                'handoff cancel',
                'or, if the primary will not come, `handoff cancel` withdraws the return (on the remote first, refused with lease_held when the primary took it back first); the holder may then close one-way',
              ),
            ]
          : [];
        return [
          step(
            'wait',
            null,
            `wait: the primary takes the work back with \`${acceptCommand(id, { leg: 'return' })}\` in its checkout; this checkout follows the remote`,
          ),
          // The primary's machine may be gone for good: the holder withdraws its return on the remote and holds the lease again.
          ...withdraw,
        ];
      }
      return [
        step(
          'accept --return',
          acceptCommand(id, { leg: 'return' }),
          `the primary takes the work back into its work tree: \`${acceptCommand(id, { leg: 'return' })}\``,
        ),
        // Taken over on this machine and handed back through the remote: its holder withdraws it as on two machines.
        ...(cycle !== null && offerTravels(cycle) && receiverRoot !== null
          ? [
              step(
                'cancel',
                'handoff cancel',
                "or, if the primary will not come, `handoff cancel` in the receiver's checkout withdraws the return (on the remote first, refused with lease_held when the primary took it back first)",
                receiverRoot,
              ),
            ]
          : []),
      ];
    case 'CLOSED':
      return [step('now', 'handoff now', 'review the returned work; the next reading or `handoff now` starts a new cycle')];
  }
}
