import {
  checkpointRef,
  failure,
  judgeTakeover,
  offerPausedRefusal,
  refusedAcceptHint,
  type Check,
  type Envelope,
  type ReceiverObservation,
} from '../../protocol/index.js';
import type { AcceptBody, Config, VerifyBody } from '../../schemas/index.js';
import type { Clock } from '../clock.js';
import { runGit } from '../git/index.js';
import type { Progress } from '../operations/index.js';
import { observeReceiver } from './receiver.js';
import type { Source, Sources } from './sources.js';

/** The judgement of a receiver against a source: what is checked, and what the receiver observes (nothing of it moves). */
export function createJudge(deps: { readonly config: Config; readonly clock: Clock; readonly sources: Sources }) {
  const { config, clock, sources } = deps;

  /**
   * Everything but the lease: integrity, identity, commit, work tree, instructions, recency. Nothing
   * of the receiver moves here; a move that would lose nothing is carried out by the accept, after every check.
   */
  async function judge(body: VerifyBody, receiverRoot: string, progress: Progress) {
    const source =
      body.from !== undefined
        ? await sources.remoteSource({ ...body, from: body.from }, receiverRoot, progress)
        : await sources.localSource(body, receiverRoot);
    if (source.kind === 'refused') return source;
    // The source's kill switch travels with its offer: refused before anything is fetched or written here.
    const paused = source.lease === null ? null : offerPausedRefusal(source.lease.record);
    if (paused !== null) return { kind: 'refused' as const, envelope: failure('paused_denied', paused, 'the source must run `handoff unpause` first') };
    progress.phase(`checking this checkout against cycle ${source.cycle.id} (fetching its checkpoint)`);
    const wantReturn = body.return === true;
    const receiver = await observeReceiver(receiverRoot, {
      manifest: source.record.manifest,
      frozenTree: source.frozenTree,
      frozenWithhold: source.frozenWithhold ?? [],
      timeoutMs: config.git_timeout_seconds * 1000,
      fetchFrom: await fetchSources(source, receiverRoot, wantReturn),
      cycle: source.cycle.id,
      // Moved whenever nothing can be lost (`--checkout` is kept for scripts that still pass it).
      move: async (tree, clean) => ((wantReturn ? tree === source.frozenTree : clean) ? 'would_move' : 'refused_dirty'),
    });
    return {
      kind: 'judged' as const,
      source,
      receiver,
      judgement: judgeTakeover(source.record.manifest, receiver, clock.now(), config.takeover_max_age_hours),
    };
  }

  /**
   * Where the receiver fetches the checkpoint: the remote it named with `--from`, else the source
   * checkout on this machine and its own remotes; the ref is derived from the cycle, never read from the manifest.
   */
  async function fetchSources(source: Source, receiverRoot: string, wantReturn: boolean) {
    const ref = checkpointRef(source.cycle.id, wantReturn ? 'return' : 'out');
    if (source.lease !== null) return { sources: [source.lease.remote], ref };
    const own = (await runGit(['remote'], { cwd: receiverRoot })).stdout.split('\n').filter(Boolean);
    // The return leg's checkpoint was made in the holder's checkout; the out leg's in the source's.
    const made = wantReturn ? source.cycle.receiver?.root : source.home?.root;
    return { sources: [...(made == null ? [] : [made]), ...own], ref };
  }

  return judge;
}

/** What a verify or accept answers: every check, the cycle, and where its records came from. */
export function resultData(source: Source, judgement: ReturnType<typeof judgeTakeover>, leg: 'out' | 'return') {
  return {
    checks: judgement.checks as readonly Check[],
    cycle: source.cycle.id,
    leg,
    workspace: source.home?.root ?? null,
    from: source.lease?.remote ?? null,
    manifest: source.record.path,
    manifest_sha256: source.record.sha256,
  };
}

/** A judgement that did not verify: what failed, and the command that works once it is dealt with. */
export function judgementEnvelope(
  data: ReturnType<typeof resultData>,
  judgement: ReturnType<typeof judgeTakeover>,
  checkout: ReceiverObservation['checkout'],
): Envelope {
  const failed = data.checks.filter((c) => c.status === 'failed').map((c) => `${c.name}: ${c.detail}`);
  const hint = refusedAcceptHint({ cycle: data.cycle, leg: data.leg, from: data.from, judgement, checkout });
  return failure(judgement.code === 'stale' ? 'stale' : 'diverged', failed.join('; '), hint, data);
}

export type Judged = Extract<Awaited<ReturnType<ReturnType<typeof createJudge>>>, { kind: 'judged' }>;

/**
 * One check an accept passes before anything is written (a package, a lease, a moved tree): the refusal,
 * or null. An accept runs its list in order and stops at the first refusal, so a new condition is one more entry.
 */
export type AcceptCheck = (judged: Judged, body: AcceptBody, receiverRoot: string) => Promise<Envelope | null>;

/** The receiver's checkout against the manifest: every check of the judgement passed. */
export const verifiedCheck: AcceptCheck = async (judged, body) => {
  if (judged.judgement.code === 'verified') return null;
  const data = resultData(judged.source, judged.judgement, body.return === true ? 'return' : 'out');
  return judgementEnvelope(data, judged.judgement, judged.receiver.checkout);
};

/** The first refusal of `checks`, in order, or null when the accept may write. */
export async function firstRefusal(checks: readonly AcceptCheck[], judged: Judged, body: AcceptBody, receiverRoot: string): Promise<Envelope | null> {
  for (const check of checks) {
    const refusal = await check(judged, body, receiverRoot);
    if (refusal !== null) return refusal;
  }
  return null;
}
