import { checkpointRef, failure, judgeTakeover, offerPausedRefusal, type Check, type Envelope } from '../../protocol/index.js';
import type { Config, VerifyBody } from '../../schemas/index.js';
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
   * of the receiver moves here; a `--checkout` that would pass is carried out only after the lease.
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
      move: async (tree, clean) => {
        if (body.checkout !== true) return 'not_requested';
        return (wantReturn ? tree === source.frozenTree : clean) ? 'would_move' : 'refused_dirty';
      },
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

/** A judgement that did not verify: what failed, and what to do about it. */
export function judgementEnvelope(data: ReturnType<typeof resultData>, code: 'diverged' | 'stale'): Envelope {
  const failed = data.checks.filter((c) => c.status === 'failed').map((c) => `${c.name}: ${c.detail}`);
  return failure(
    code,
    failed.join('; '),
    code === 'stale'
      ? 'ask the source for a fresh handoff (`handoff now` there)'
      : 'real state wins: reconcile the checkout (or use --checkout on a clean one), then verify again',
    data,
  );
}
