import { offeredAcceptWords, type OfferedCycle } from '../../../protocol/accept-command.js';
import type { DaemonAnswer } from './lean-client.js';

/**
 * From EVACUATE on, the work tree belongs to the checkpoint and then to the lease holder. CLOSED is
 * not listed: the cycle is over and the next reading starts a new one in NORMAL.
 */
const WHAT_TO_DO: Readonly<Record<string, (cycle: OfferedCycle) => string>> = {
  EVACUATE: () =>
    'The daemon is checkpointing the work tree: finish your current step without changing files, refresh the capsule, then run `handoff drained`.',
  HANDOFF_READY: (cycle) => {
    const { command, where } = offeredAcceptWords(cycle, 'out');
    return `The work is handed off and frozen; a receiver takes it over with \`${command}\` ${where}. Read .session-handoff/${cycle.id}/HANDOFF.md.`;
  },
  TAKEOVER: () => 'Another executor holds the lease and works here; it hands back with `handoff return`.',
  RETURN_HANDOFF_READY: (cycle) => `The work was handed back; the primary takes it with \`${offeredAcceptWords(cycle, 'return').command}\`.`,
};

export type GuardVerdict = { readonly allow: true; readonly note: string | null } | { readonly allow: false; readonly reason: string };

interface StatusOutline {
  readonly workspace?: unknown;
  /** protocol/edit-policy.ts, computed by the daemon with its config: who may change files now. */
  readonly edit_policy?: { readonly who?: unknown; readonly why?: unknown };
  readonly state?: unknown;
  readonly cycle?: { readonly id?: unknown; readonly remote?: { readonly name?: unknown } | null } | null;
  readonly lease?: { readonly holder?: { readonly executor?: unknown } | null };
}

/**
 * Deny a file-changing tool to a session that does not hold the lease once the repository is past
 * PREPARE; allow everything else. Without an answer the guard allows: it is a seatbelt, the lease is
 * the authority, and a stopped daemon must not lock every editor on the machine. It says so.
 */
export function guardVerdict(session: string | null, answer: DaemonAnswer): GuardVerdict {
  if (answer.kind === 'down') return { allow: true, note: 'handoff: daemon down; the lease guard is not enforcing' };
  if (answer.kind === 'timeout') return { allow: true, note: 'handoff: daemon not answering; the lease guard is not enforcing' };
  const { envelope } = answer;
  // Outside a repository there is no lease to hold.
  if (envelope.error !== undefined || envelope.data === null) {
    return { allow: true, note: envelope.code === 'not_a_repository' ? null : `handoff: ${envelope.error?.message ?? envelope.code}` };
  }
  const status = envelope.data as StatusOutline;
  const state = String(status.state);
  const todo = WHAT_TO_DO[state];
  const who = status.edit_policy?.who;
  if (todo === undefined || who === 'anyone') return { allow: true, note: null };
  const holder = status.lease?.holder?.executor;
  if (who !== 'nobody' && typeof holder === 'string' && holder === session) return { allow: true, note: null };
  const remote = status.cycle?.remote?.name;
  const cycle: OfferedCycle = {
    id: typeof status.cycle?.id === 'string' ? status.cycle.id : 'CYCLE',
    remote: typeof remote === 'string' ? { name: remote } : null,
  };
  const held = typeof holder === 'string' ? `the lease is held by '${holder}'` : 'nobody holds the lease';
  const why = typeof status.edit_policy?.why === 'string' ? status.edit_policy.why : 'only the lease holder may change files now';
  const nobody = who === 'nobody';
  return {
    allow: false,
    reason:
      `session-handoff: ${String(status.workspace)} is in ${state}: ${why}. ${nobody ? 'No session may change files now' : `This session (${session ?? 'unknown'}) does not hold its lease (${held})`}. ` +
      `${todo(cycle)} Do not work around this with shell commands.`,
  };
}
