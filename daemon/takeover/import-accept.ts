import { claimOffer, failure, outcomeEnvelope, type Envelope } from '../../protocol/index.js';
import type { AcceptBody, Config } from '../../schemas/index.js';
import type { Clock } from '../clock.js';
import { writeLease } from '../evacuation/remote-records.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import type { AcceptCheck } from './judgement.js';
import { createRemoteLeaseMoves, tookFirst, unwrittenLease } from './remote-lease-moves.js';
import type { Source } from './sources.js';

/** The accept of a cycle offered by another machine: its lease lives only on the chain until the winner imports it here. */
export function createImportAccept(deps: { readonly registry: WorkspaceRegistry; readonly clock: Clock; readonly config: Config }) {
  const { registry, clock, config } = deps;
  const chain = createRemoteLeaseMoves({ clock, timeoutMs: config.git_timeout_seconds * 1000 });

  /** The claim of the offer and the machine's event that imports it, for one head of the chain. */
  function claim(source: Source, body: AcceptBody, receiverRoot: string) {
    const lease = source.lease;
    if (lease === null) return { ok: false as const, refusal: failure('internal_error', 'a remote source without its lease', 'this is a bug') };
    const next = claimOffer(lease.record, body.as, new Date(clock.now()).toISOString(), registry.find(receiverRoot)?.snapshot().context.lease.last_token);
    if (!next.ok) return { ok: false as const, refusal: failure('lease_held', next.reason, 'only one executor holds the lease') };
    const token = next.record.holder?.token ?? 0;
    const importing = (head: string) => ({
      type: 'IMPORT_TAKEOVER' as const,
      cycle: { ...source.cycle, remote: { name: lease.remote, lease_head: head } },
      executor: body.as,
      token,
      receiver_root: receiverRoot,
    });
    return { ok: true as const, lease, next, token, importing };
  }

  /**
   * Asked of the pure machine before anything is written or the chain moves: a receiver that cannot take
   * the cycle now (paused, evacuating, holding another) is refused while the lease is still on offer for
   * someone else, and before the remote's package lands in its checkout. A cycle of this daemon is not imported.
   */
  const receiverMayImport: AcceptCheck = async ({ source }, body, receiverRoot) => {
    if (source.home !== null) return null;
    const claimed = claim(source, body, receiverRoot);
    if (!claimed.ok) return claimed.refusal;
    const receiver = await registry.open(receiverRoot);
    const trial = receiver.trial({ ...claimed.importing(claimed.lease.head), at: clock.now(), entropy: 'aaaaaa' });
    return trial.changed ? null : outcomeEnvelope(trial, receiver.snapshot());
  };

  /** Another machine's cycle, once `receiverMayImport` passed: the push of a child lease record decides; only the winner imports it. */
  async function acceptRemote(source: Source, body: AcceptBody, receiverRoot: string): Promise<Envelope> {
    const claimed = claim(source, body, receiverRoot);
    if (!claimed.ok) return claimed.refusal;
    const { lease, next, token, importing } = claimed;
    const timeoutMs = config.git_timeout_seconds * 1000;
    const written = await writeLease(receiverRoot, lease.remote, next.record, lease.head, timeoutMs);
    if (!written.ok) {
      if (!written.rejected) return unwrittenLease(lease.remote, source.cycle.id, written);
      return tookFirst(receiverRoot, lease.remote, source.cycle.id, timeoutMs, 'only one executor holds the lease');
    }
    const { outcome, snapshot } = await registry.dispatch(receiverRoot, importing(written.head));
    if (outcome.changed) return outcomeEnvelope(outcome, snapshot);
    // Refused after all (the receiver moved since the trial): the take is undone on the chain, as after a failed checkout.
    const back = await chain.reoffer(receiverRoot, lease.remote, source.cycle.id, token);
    if (back.ok) return outcomeEnvelope(outcome, snapshot);
    return failure(
      outcome.code,
      `${outcome.message ?? outcome.code}; the lease taken on '${lease.remote}' for this accept could not be offered again (${back.why}): token ${token} holds it there`,
      `free it with \`handoff lease break --reason REASON\` where the cycle is followed (the source), then offer or accept again`,
      { cycle: source.cycle.id, token },
    );
  }

  return { receiverMayImport, acceptRemote };
}
