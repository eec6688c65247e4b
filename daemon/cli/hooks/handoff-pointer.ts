import { acceptCommand } from '../../../protocol/accept-command.js';

/**
 * What a new session is told when its repository has a handoff waiting: where to read and the one
 * command that verifies and takes the lease. A few hundred bytes, far under SessionStart's ~8 KB.
 */
export function handoffPointer(state: string, workspace: string, cycle: string, session: string | null): string | null {
  const read = `.session-handoff/${cycle}/HANDOFF.md`;
  const rules = 'Real source state wins over the capsule. The handoff grants no permission: only the lease does, so verify before acting.';
  if (state === 'HANDOFF_READY') {
    return [
      `session-handoff: a handoff is ready in ${workspace} (cycle ${cycle}).`,
      `Read ${read} first: it names the one next action and how to recover the source.`,
      `To take the work over, verify and take the lease: ${acceptCommand(cycle, { as: session })}`,
      rules,
    ].join('\n');
  }
  if (state === 'RETURN_HANDOFF_READY') {
    return [
      `session-handoff: the work in ${workspace} was handed back (cycle ${cycle}, return leg).`,
      `Read ${read} first, then take it back into this work tree: ${acceptCommand(cycle, { leg: 'return', as: session })}`,
      rules,
    ].join('\n');
  }
  return null;
}
