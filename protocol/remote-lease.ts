/**
 * The lease as it travels through the git remote: a chain of commits on `refs/handoff/lease/<cycle>`,
 * each holding one record. Moving the lease is pushing a child of the commit you read; the remote
 * takes exactly one of two racing pushes (never forced), so there is one holder everywhere.
 */
import type { RemoteLeaseRecordData } from '../schemas/remote-records.schema.js';
import { failure, type Envelope } from './envelope.js';
import type { Cycle, WorkspaceState } from './workspace-machine.js';

/** One record of the chain; its schema (schemas/remote-records.schema.ts) is checked on every read. */
export type RemoteLeaseRecord = Readonly<RemoteLeaseRecordData>;
export type RemoteLeaseState = RemoteLeaseRecord['state'];

export const leaseRef = (cycle: string): string => `refs/handoff/lease/${cycle}`;
export const packagesRef = (cycle: string): string => `refs/handoff/packages/${cycle}`;
export const LEASE_RECORD_FILE = 'lease.json';
/** The checkpoint branch of a leg: the only ref a receiver fetches for it, whatever a manifest says. */
export const checkpointRef = (cycle: string, leg: 'out' | 'return'): string => `refs/heads/handoff/${cycle}${leg === 'return' ? '-return' : ''}`;

export function offered(
  cycle: string,
  lastToken: number,
  holder: RemoteLeaseRecord['holder'],
  manifest: RemoteLeaseRecord['manifest'],
  at: string,
): RemoteLeaseRecord {
  return { schema_version: 1, cycle, state: 'offered', holder, last_token: lastToken, manifest, at };
}

export type LeaseMove = { readonly ok: true; readonly record: RemoteLeaseRecord } | { readonly ok: false; readonly reason: string };

/** A receiver takes an offered lease (out leg) or the primary takes a returned one (closing). */
export function take(record: RemoteLeaseRecord, executor: string, at: string): LeaseMove {
  const next = { executor, token: record.last_token + 1 };
  if (record.state === 'offered') return { ok: true, record: { ...record, state: 'taken', holder: next, last_token: next.token, at } };
  if (record.state === 'return_offered') return { ok: true, record: { ...record, state: 'closed', holder: next, last_token: next.token, at } };
  const who = record.holder === null ? '' : ` by '${record.holder.executor}' (token ${record.holder.token})`;
  return { ok: false, reason: `the lease of cycle ${record.cycle} is ${record.state}${who}` };
}

/** The holder offers the work back: only with the token the chain gave it. */
export function offerReturn(record: RemoteLeaseRecord, token: number, manifest: RemoteLeaseRecord['manifest'], at: string): LeaseMove {
  if (record.state !== 'taken' || record.holder?.token !== token) {
    return {
      ok: false,
      reason: `token ${token} does not hold the lease of cycle ${record.cycle} (${record.state}${record.holder ? `, holder '${record.holder.executor}'` : ''})`,
    };
  }
  return { ok: true, record: { ...record, state: 'return_offered', manifest, at } };
}

export const serializeLeaseRecord = (record: RemoteLeaseRecord): string => `${JSON.stringify(record, null, 2)}\n`;

/** While the cycle is offered, taken or handed back, its lease lives on the remote (lease-sync follows it there). */
export const TRAVELLING_STATES: ReadonlySet<WorkspaceState> = new Set(['HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY']);

/**
 * One truth for a travelling lease: a local acquire, release or break would leave the remote record
 * naming the old holder, so every other machine would go on trusting it. Refused, saying where the
 * lease lives and how it moves there.
 */
export function travellingLeaseRefusal(cycle: Cycle | null, state: WorkspaceState, verb: 'acquire' | 'release' | 'break'): Envelope | null {
  if (cycle === null || cycle.remote === null || !TRAVELLING_STATES.has(state)) return null;
  const ref = leaseRef(cycle.id);
  return failure(
    'lease_travels',
    `the lease of cycle ${cycle.id} lives on the remote '${cycle.remote.name}' (${ref}, ${state}): a local \`handoff lease ${verb}\` would leave that record naming another holder`,
    `it moves on the remote only: \`handoff accept ${cycle.id} --from ${cycle.remote.name}\` takes an offered lease, \`handoff return\` hands it back, \`handoff accept ${cycle.id} --return\` closes; see the holder with \`handoff status\` or \`git fetch ${cycle.remote.name} ${ref}\``,
    { cycle: cycle.id, remote: cycle.remote.name, ref, state },
  );
}
