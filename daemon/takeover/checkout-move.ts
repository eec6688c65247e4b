import { acceptCommand, failure, shellQuote, type Envelope } from '../../protocol/index.js';
import type { AcceptBody } from '../../schemas/index.js';
import type { LeaseHomes } from '../lease/lease-home.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { bringToReturned, switchToCheckpoint, switchWords, undoPartialSwitch } from './receiver.js';
import type { Source } from './sources.js';

/** The move of an accept's work tree (out leg: once the lease is the receiver's; return leg: before the cycle closes), and what is done when git cannot make it. */
export function createCheckoutMove(deps: { readonly registry: WorkspaceRegistry; readonly homes: LeaseHomes }) {
  const { registry, homes } = deps;

  /** The remote whose LFS endpoint a move may smudge from: the one named with `--from`, else the one the cycle's lease travels on (else lfs.ts picks). */
  const lfsRemote = (source: Source): string | null => source.lease?.remote ?? source.cycle.remote?.name ?? null;

  /** The move: a clean tree to the checkpoint on `handoff/<cycle>`, or a frozen one to the returned tree. */
  async function carryOutCheckout(source: Source, receiverRoot: string, wantReturn: boolean): Promise<void> {
    const checkpoint = source.record.manifest.checkpoint;
    const remote = lfsRemote(source);
    if (wantReturn) await bringToReturned(receiverRoot, source.frozenTree ?? '', checkpoint.tree ?? '', { withhold: source.frozenWithhold ?? [], remote });
    else await switchToCheckpoint(receiverRoot, source.cycle.id, checkpoint.commit ?? '', remote);
  }

  /** The out leg's lease is the receiver's, the tree did not come: say which token, which checkpoint, and the command that finishes the move. */
  function checkoutIncomplete(source: Source, receiverRoot: string, token: number, why: string): Envelope {
    const commit = source.record.manifest.checkpoint.commit ?? '';
    return failure(
      'checkout_incomplete',
      `the lease of cycle ${source.cycle.id} is yours (token ${token}), but git could not move the work tree: ${why}`,
      `nothing else moved; fix the cause, then run \`${switchWords(source.cycle.id, commit)}\` in ${receiverRoot}; \`handoff status\` there shows the cycle you now hold and its ways on`,
      { cycle: source.cycle.id, leg: 'out', token, checkpoint: commit, checkout: receiverRoot },
    );
  }

  /** The return leg's move failed before the cycle closed: the return is still on offer, and the same accept finishes it. */
  function returnNotBrought(source: Source, receiverRoot: string, why: string): Envelope {
    const commit = source.record.manifest.checkpoint.commit ?? '';
    return failure(
      'checkout_incomplete',
      `git could not bring the returned work of cycle ${source.cycle.id} into ${receiverRoot}: ${why}; the cycle is not closed and the lease did not move`,
      `fix the cause, then run \`${acceptCommand(source.cycle.id, { leg: 'return' })}\` again; the returned work stays on the branch handoff/${source.cycle.id}-return`,
      { cycle: source.cycle.id, leg: 'return', token: null, checkpoint: commit, checkout: receiverRoot },
    );
  }

  /**
   * The returned work is in the tree but the cycle could not close (the return was withdrawn first, the
   * remote refused or could not be reached): the tree is put back exactly as frozen, so the holder's cycle
   * goes on as if this accept never ran. Only when git cannot put it back is the work left in, and said so.
   */
  async function closeRefused(source: Source, receiverRoot: string, refused: Envelope): Promise<Envelope> {
    const checkpoint = source.record.manifest.checkpoint;
    const options = { withhold: source.frozenWithhold ?? [], remote: lfsRemote(source) };
    const back = await bringToReturned(receiverRoot, checkpoint.tree ?? '', source.frozenTree ?? '', options).then(
      () => null,
      (error: unknown) => (error as Error).message,
    );
    if (back === null) return refused;
    return failure(
      refused.code,
      `${refused.error?.message ?? refused.code}; the returned work of cycle ${source.cycle.id} is in the work tree, and git could not put the frozen state back (${back})`,
      `${refused.error?.hint ?? ''}; \`${acceptCommand(source.cycle.id, { leg: 'return' })}\` closes the cycle once it can`,
      refused.data,
    );
  }

  /**
   * The out leg's move failed after the accept was journaled: the accept is undone, so the lease
   * is where it was — on offer — and the tree as it was; the spent token stays stale (last_token keeps
   * it) and the next accept gets a higher one. A lease that travels is offered again on the chain first
   * (an `offered` child of the `taken` record, never forced): the chain is the truth, so when that push
   * fails nothing is undone here either and the answer says how to finish the move by hand.
   *
   * A crash between journaling the accept and journaling the undo leaves the accept standing (TAKEOVER,
   * the receiver holding the token): the same ways out as any holder — finish the move by hand
   * (`git switch -c handoff/CYCLE COMMIT` in the receiver's checkout), or `handoff return`. A crash after the
   * chain's `offered` push and before the journal is completed by lease-sync, which reads that record
   * (REMOTE_LEASE) and undoes the accept in the machine.
   */
  async function undoAccept(source: Source, body: AcceptBody, receiverRoot: string, token: number, why: string): Promise<Envelope> {
    const id = source.cycle.id;
    const commit = source.record.manifest.checkpoint.commit ?? '';
    // The workspace that journaled the accept: the source's on this machine, else the receiver's (imported).
    const where = source.home?.root ?? receiverRoot;
    const workspace = registry.find(where);
    const left = await undoPartialSwitch(receiverRoot, commit, lfsRemote(source)).catch((error: unknown) => [`(not checked: ${(error as Error).message})`]);
    const leftWords =
      left.length === 0 ? '' : `; git left ${left.length} path(s) it had written that differ from the checkpoint: ${left.slice(0, 5).join(', ')}`;
    const data = { cycle: id, leg: 'out', token, checkpoint: commit, checkout: receiverRoot, left };
    // Where the lease lives says how it goes back on offer: a travelling one on its chain first.
    const offered = workspace === undefined ? { ok: true as const, head: null } : await homes.at(workspace).offerAgain(token);
    if (!offered.ok) {
      return failure(
        'checkout_incomplete',
        `git could not move ${receiverRoot} to the checkpoint of cycle ${id}: ${why}; the lease could not be offered again on '${offered.remote}' (${offered.why}), so it stays yours there with token ${token}${leftWords}`,
        `fix the cause, then finish the move with \`cd ${shellQuote(receiverRoot)} && ${switchWords(id, commit)}\`; \`handoff status\` there shows the cycle you hold`,
        { ...data, undone: false },
      );
    }
    const leaseHead = offered.head;
    const { outcome } = await registry.dispatch(where, { type: 'ACCEPT_UNDONE', token, imported: source.home === null, reason: why, lease_head: leaseHead });
    if (!outcome.changed) return checkoutIncomplete(source, receiverRoot, token, `${why}; the accept could not be undone: ${outcome.message ?? outcome.code}`);
    return failure(
      'checkout_incomplete',
      `git could not move ${receiverRoot} to the checkpoint of cycle ${id}: ${why}; the accept was undone: the lease is on offer again and token ${token} is spent${leftWords}`,
      `fix the cause, then accept again: \`${acceptCommand(id, { from: source.lease?.remote ?? null, as: body.as })}\``,
      { ...data, undone: true, state: source.home === null ? 'NORMAL' : 'HANDOFF_READY' },
    );
  }

  return { carryOutCheckout, returnNotBrought, closeRefused, undoAccept };
}
