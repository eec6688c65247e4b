import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  checkpointRef,
  failure,
  packagesRef,
  claimOffer,
  reofferTaken,
  shellQuote,
  judgeTakeover,
  outcomeEnvelope,
  packageFiles,
  closableOneWay,
  leaseTravels,
  stateOf,
  step,
  statusView,
  success,
  type Cycle,
  type DrainProgress,
  type Envelope,
  type Check,
  type RemoteLeaseRecord,
  type WorkspaceState,
} from '../../protocol/index.js';
import type { AcceptBody, CloseBody, Config, ReturnBody, VerifyBody } from '../../schemas/index.js';
import type { Clock } from '../clock.js';
import { runGit } from '../git/index.js';
import { readLease, readPackages, writeLease } from '../evacuation/remote-records.js';
import { chainRefusal, createRemoteLeaseMoves, unwrittenLease, type ChainMoved } from './remote-lease-moves.js';
import { unfollowed, type Progress } from '../operations/index.js';
import { writeFileAtomic } from '../store/index.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';
import { cycleDir } from '../evacuation/package-writer.js';
import { readAbandoned } from '../evacuation/abandoned-record.js';
import { bringToReturned, observeReceiver, switchToCheckpoint, undoPartialSwitch } from './receiver.js';
import { frozenWithheld } from './frozen-withheld.js';
import { importedCycle } from './imported-cycle.js';
import { materialize, realWorkspaceDir } from './materialize.js';
import { offeredCyclesOn } from './remote-offers.js';
import { cycleRevisions, proveTravellingPackage, readManifest, recordedCycles, type ManifestRecord } from './records.js';

export interface TakeoverDeps {
  readonly registry: WorkspaceRegistry;
  readonly config: Config;
  readonly clock: Clock;
  readonly rootOf: (dir: string) => Promise<string>;
  /** Wakes the drain of a workspace (the return leg runs on the holder's side). */
  readonly startDrain: (home: string) => void;
}

/** The holder's credential for the return leg, written by the daemon beside the receiver's work. */
export interface LeaseRecord {
  readonly cycle: string;
  readonly home: string;
  readonly executor: string;
  readonly token: number;
}

const LEASE_FILE = 'lease.json';
/** `handoff list` without --all: the latest cycles of each workspace, newest last. */
const LIST_LATEST = 20;

type Refused = { readonly kind: 'refused'; readonly envelope: Envelope };
const refused = (envelope: Envelope): Refused => ({ kind: 'refused', envelope });

/** Where the record to verify comes from: a cycle of this daemon (home) or one read from a remote. */
interface Source {
  readonly kind: 'source';
  readonly home: Workspace | null;
  readonly cycle: Cycle;
  readonly record: ManifestRecord;
  readonly frozenTree: string | null;
  /** What the out snapshot withheld (a secret): left out when the primary's tree is compared with the frozen one. */
  readonly frozenWithhold?: readonly string[];
  readonly lease: { readonly record: RemoteLeaseRecord; readonly head: string; readonly remote: string } | null;
  /** A package read from a remote, proven and held in memory: written into the checkout only by an accept that passed. */
  readonly package: Readonly<Record<string, string>> | null;
}

interface Candidate {
  readonly home: Workspace;
  readonly cycle: Cycle;
  readonly state: WorkspaceState;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The leg a verify or accept is about, and where its records are. */
function legOf(cycle: Cycle, wantReturn: boolean): { drain: DrainProgress | null; offered: WorkspaceState } {
  return wantReturn ? { drain: cycle.return_drain, offered: 'RETURN_HANDOFF_READY' } : { drain: cycle.drain, offered: 'HANDOFF_READY' };
}

/**
 * Verify-and-accept, the return leg and the records. Real state wins over what a manifest says;
 * a manifest never grants anything — only the lease taken here does.
 */
export function createTakeoverService(deps: TakeoverDeps) {
  const { registry, clock, config } = deps;
  const chain = createRemoteLeaseMoves({ clock, timeoutMs: config.git_timeout_seconds * 1000 });

  function candidates(): Candidate[] {
    return registry
      .all()
      .map((home) => ({ home, snapshot: home.snapshot() }))
      .filter(({ snapshot }) => snapshot.context.cycle !== null)
      .map(({ home, snapshot }) => ({ home, cycle: snapshot.context.cycle as Cycle, state: stateOf(snapshot) }));
  }

  async function pick(body: VerifyBody, receiverRoot: string): Promise<Candidate | Envelope> {
    const wanted = body.return === true ? 'RETURN_HANDOFF_READY' : 'HANDOFF_READY';
    if (body.cycle !== undefined) {
      const found = candidates().find((c) => c.cycle.id === body.cycle);
      return found ?? failure('unknown_cycle', `no current cycle ${body.cycle} on this daemon`, '`handoff list` shows the cycles on record');
    }
    if (body.latest !== true) return failure('usage_error', 'name the cycle, or pass --latest', '`handoff list` shows the cycles on record');
    const receiverRoots = new Set(await rootCommits(receiverRoot));
    // Only cycles of this repository (same root commit) are candidates for this checkout.
    const ready = candidates().filter((c) => c.state === wanted && receiverRoots.has(str(c.cycle.drain.steps.inspect?.summary['root_commit']) ?? ''));
    if (ready.length === 1 && ready[0] !== undefined) return ready[0];
    if (ready.length === 0)
      return failure('unknown_cycle', `no cycle of this repository is ${wanted}`, 'wait for the source to reach it, see `handoff status` there');
    return failure(
      'ambiguous',
      `${ready.length} cycles are ${wanted}: ${ready.map((c) => c.cycle.id).join(', ')}`,
      'name the cycle: `handoff accept CYCLE --as EXECUTOR`',
      { cycles: ready.map((c) => ({ cycle: c.cycle.id, workspace: c.home.root })) },
    );
  }

  async function rootCommits(root: string): Promise<string[]> {
    const result = await runGit(['rev-list', '--max-parents=0', 'HEAD'], { cwd: root });
    return result.code === 0 ? result.stdout.split('\n').filter(Boolean) : [];
  }

  /** A cycle of this daemon: it must be offered for the leg asked, and its source not paused. */
  async function localSource(body: VerifyBody, receiverRoot: string): Promise<Refused | Source> {
    const picked = await pick(body, receiverRoot);
    if ('authority' in picked) return refused(picked);
    const { home, cycle, state } = picked;
    const wantReturn = body.return === true;
    const { drain, offered } = legOf(cycle, wantReturn);
    const packaged = drain?.steps.package;
    if (state !== offered || drain === null || packaged === undefined) {
      const taken = state === 'TAKEOVER' || state === 'RETURN_HANDOFF_READY' || state === 'CLOSED';
      const holder = home.snapshot().context.lease.holder;
      if (taken && !(wantReturn && state === 'RETURN_HANDOFF_READY')) {
        return refused(
          failure(
            'lease_held',
            `cycle ${cycle.id} was already taken${holder ? ` by '${holder.executor}'` : ''} (${state})`,
            'only one executor holds the lease; see `handoff status` in the source repository',
          ),
        );
      }
      return refused(
        failure('wrong_state', `cycle ${cycle.id} is ${state}, not ${offered}`, 'wait until the source offers it; `handoff status` there says why not'),
      );
    }
    const paused = home.snapshot().context.paused;
    if (paused.global !== null || paused.workspace !== null) {
      return refused(
        failure('paused_denied', `the source workspace is paused (${(paused.workspace ?? paused.global)?.path ?? ''})`, 'run `handoff unpause` first'),
      );
    }
    const files = packageFiles(drain.leg, drain.revision);
    const record = await readManifest(join(cycleDir(home.root, cycle.id), files.manifest), drain.manifests.at(-1) ?? null);
    const frozenTree = wantReturn ? str(cycle.drain.steps.snapshot?.summary['tree']) : null;
    const frozenWithhold = wantReturn ? await frozenWithheld(home.root, cycle) : [];
    return { kind: 'source', home, cycle, record, frozenTree, frozenWithhold, lease: null, package: null };
  }

  /**
   * A cycle from another machine, with only this clone and its remote: the lease record and the
   * package are read from `refs/handoff/` and proven in memory against the sha256 the lease record
   * names. Nothing of it is written here: a verify leaves the checkout as it was, and an accept
   * writes the package only once every check passed (materialize.ts).
   */
  async function remoteSource(body: VerifyBody & { from: string }, receiverRoot: string, progress: Progress): Promise<Refused | Source> {
    const remote = body.from;
    const remotes = (await runGit(['remote'], { cwd: receiverRoot })).stdout.split('\n').filter(Boolean);
    if (!remotes.includes(remote))
      return refused(failure('usage_error', `'${remote}' is not a remote of ${receiverRoot}`, `one of: ${remotes.join(', ') || '(none)'}`));
    if (body.return === true)
      return refused(
        failure(
          'usage_error',
          'the return leg is accepted in the source checkout',
          'its daemon follows the lease on the remote; run `handoff accept CYCLE --return` there',
        ),
      );
    const timeoutMs = config.git_timeout_seconds * 1000;
    if (body.cycle === undefined) progress.phase(`listing the offers on '${remote}'`);
    const cycle = body.cycle ?? (await latestOffered(receiverRoot, remote, body.latest === true, timeoutMs));
    if (typeof cycle !== 'string') return refused(cycle);
    progress.phase(`reading the lease and package of cycle ${cycle} from '${remote}'`);
    return remoteCycle({ ...body, cycle }, remote, receiverRoot, timeoutMs);
  }

  /** `--from REMOTE --latest`: the one cycle the remote offers, as `--latest` picks the one ready cycle here. */
  async function latestOffered(receiverRoot: string, remote: string, latest: boolean, timeoutMs: number): Promise<string | Envelope> {
    if (!latest)
      return failure('usage_error', '--from needs the cycle id, or --latest', 'the source prints it; `git ls-remote REMOTE "refs/handoff/lease/*"` lists them');
    const { ready, skipped } = await offeredCyclesOn(receiverRoot, remote, timeoutMs);
    if (ready.length === 1 && ready[0] !== undefined) return ready[0];
    const passed =
      skipped.length === 0
        ? ''
        : ` (${skipped.length} unreadable lease ref${skipped.length === 1 ? '' : 's'} passed over: ${skipped
            .slice(0, 3)
            .map((s) => `${s.ref}: ${s.why}`)
            .join('; ')})`;
    if (ready.length === 0)
      return failure(
        'unknown_cycle',
        `'${remote}' offers no cycle${passed}`,
        'wait for the source to publish its handoff (`handoff status` there), then retry',
      );
    return failure(
      'ambiguous',
      `'${remote}' offers ${ready.length} cycles: ${ready.join(', ')}`,
      'name the cycle: `handoff accept CYCLE --from REMOTE --as EXECUTOR`',
      { cycles: ready.map((id) => ({ cycle: id, workspace: null })) },
    );
  }

  async function remoteCycle(body: VerifyBody & { cycle: string }, remote: string, receiverRoot: string, timeoutMs: number): Promise<Refused | Source> {
    const { head, record } = await readLease(receiverRoot, remote, body.cycle, timeoutMs);
    if (record === null || head === null)
      return refused(failure('unknown_cycle', `'${remote}' has no lease for cycle ${body.cycle}`, 'check the cycle id and that the source pushed its records'));
    if (record.state !== 'offered') {
      const who = record.holder ? ` by '${record.holder.executor}' (token ${record.holder.token})` : '';
      return refused(failure('lease_held', `cycle ${body.cycle} is ${record.state}${who} on '${remote}'`, 'only one executor holds the lease'));
    }
    const files = await readPackages(receiverRoot, remote, body.cycle, timeoutMs);
    if (files === null)
      return refused(
        failure('corrupt_record', `'${remote}' has a lease but no package for cycle ${body.cycle}`, 'inspect refs/handoff/packages on the remote'),
      );
    const manifest = proveTravellingPackage(files, { cycle: body.cycle, leg: 'out', manifest: record.manifest, remote, ref: packagesRef(body.cycle) });
    // Named where it comes from: the remote's package ref, until an accept writes it here.
    const manifestRecord = { path: `${packagesRef(body.cycle)}:${body.cycle}/${record.manifest.path}`, manifest, sha256: record.manifest.sha256 };
    return {
      kind: 'source',
      home: null,
      cycle: importedCycle(manifest, record, remote, head),
      record: manifestRecord,
      frozenTree: null,
      lease: { record, head, remote },
      package: files,
    };
  }

  /**
   * Everything but the lease: integrity, identity, commit, work tree, instructions, recency. Nothing
   * of the receiver moves here; a `--checkout` that would pass is carried out only after the lease.
   */
  async function judge(body: VerifyBody, receiverRoot: string, progress: Progress) {
    const source = body.from !== undefined ? await remoteSource({ ...body, from: body.from }, receiverRoot, progress) : await localSource(body, receiverRoot);
    if (source.kind === 'refused') return source;
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

  /** The remote whose LFS endpoint a move may smudge from: the one named with `--from`, else the one the cycle's lease travels on (else lfs.ts picks). */
  const lfsRemote = (source: Source): string | null => source.lease?.remote ?? source.cycle.remote?.name ?? null;

  /** The `--checkout` move, once the lease is ours: a clean tree to the checkpoint, or a frozen one to the returned tree. */
  async function carryOutCheckout(source: Source, receiverRoot: string, wantReturn: boolean): Promise<void> {
    const checkpoint = source.record.manifest.checkpoint;
    const remote = lfsRemote(source);
    if (wantReturn) await bringToReturned(receiverRoot, source.frozenTree ?? '', checkpoint.tree ?? '', { withhold: source.frozenWithhold ?? [], remote });
    else await switchToCheckpoint(receiverRoot, checkpoint.commit ?? '', remote);
  }

  /** The lease is the receiver's, the tree did not come: say which token, which checkpoint, and the command that finishes the move. */
  function checkoutIncomplete(source: Source, receiverRoot: string, leg: 'out' | 'return', token: number, why: string): Envelope {
    const commit = source.record.manifest.checkpoint.commit ?? '';
    const finish =
      leg === 'return'
        ? `the commands under "Recover the source" in .session-handoff/${source.cycle.id}/return/HANDOFF.md`
        : `\`git switch --detach ${commit}\` in ${receiverRoot}`;
    return failure(
      'checkout_incomplete',
      `the lease of cycle ${source.cycle.id} is yours (token ${token}), but git could not move the work tree: ${why}`,
      `nothing else moved; fix the cause, then run ${finish}; \`handoff status\` there shows the cycle you now hold and its ways on`,
      { cycle: source.cycle.id, leg, token, checkpoint: commit, checkout: receiverRoot },
    );
  }

  /**
   * The out leg's `--checkout` failed after the accept was journaled: the accept is undone, so the lease
   * is where it was — on offer — and the tree as it was; the spent token stays stale (last_token keeps
   * it) and the next accept gets a higher one. A lease that travels is offered again on the chain first
   * (an `offered` child of the `taken` record, never forced): the chain is the truth, so when that push
   * fails nothing is undone here either and the answer says how to finish the move by hand.
   *
   * A crash between journaling the accept and journaling the undo leaves the accept standing (TAKEOVER,
   * the receiver holding the token): the same ways out as any holder — finish the move by hand
   * (`git switch --detach COMMIT` in the receiver's checkout), or `handoff return`. A crash after the
   * chain's `offered` push and before the journal is completed by lease-sync, which reads that record
   * (REMOTE_LEASE) and undoes the accept in the machine.
   */
  async function undoAccept(source: Source, body: AcceptBody, receiverRoot: string, token: number, why: string): Promise<Envelope> {
    const id = source.cycle.id;
    const commit = source.record.manifest.checkpoint.commit ?? '';
    // The workspace that journaled the accept: the source's on this machine, else the receiver's (imported).
    const where = source.home?.root ?? receiverRoot;
    const cycle = registry.find(where)?.snapshot().context.cycle ?? null;
    const left = await undoPartialSwitch(receiverRoot, commit, lfsRemote(source)).catch((error: unknown) => [`(not checked: ${(error as Error).message})`]);
    const leftWords =
      left.length === 0 ? '' : `; git left ${left.length} path(s) it had written that differ from the checkpoint: ${left.slice(0, 5).join(', ')}`;
    const data = { cycle: id, leg: 'out', token, checkpoint: commit, checkout: receiverRoot, left };
    let leaseHead: string | null = null;
    if (cycle?.remote != null) {
      const offered = await reofferOnRemote(where, cycle.remote.name, id, token);
      if (!offered.ok) {
        return failure(
          'checkout_incomplete',
          `git could not move ${receiverRoot} to the checkpoint of cycle ${id}: ${why}; the lease could not be offered again on '${cycle.remote.name}' (${offered.why}), so it stays yours there with token ${token}${leftWords}`,
          `fix the cause, then finish the move with \`git -C ${shellQuote(receiverRoot)} switch --detach ${commit}\`; \`handoff status\` there shows the cycle you hold`,
          { ...data, undone: false },
        );
      }
      leaseHead = offered.head;
    }
    const { outcome } = await registry.dispatch(where, { type: 'ACCEPT_UNDONE', token, imported: source.home === null, reason: why, lease_head: leaseHead });
    if (!outcome.changed)
      return checkoutIncomplete(source, receiverRoot, 'out', token, `${why}; the accept could not be undone: ${outcome.message ?? outcome.code}`);
    const from = source.lease === null ? '' : ` --from ${shellQuote(source.lease.remote)}`;
    return failure(
      'checkout_incomplete',
      `git could not move ${receiverRoot} to the checkpoint of cycle ${id}: ${why}; the accept was undone: the lease is on offer again and token ${token} is spent${leftWords}`,
      `fix the cause, then accept again: \`handoff accept ${id}${from} --as ${shellQuote(body.as)} --checkout\``,
      { ...data, undone: true, state: source.home === null ? 'NORMAL' : 'HANDOFF_READY' },
    );
  }

  /** The chain's `offered` record after an undone accept, pushed as a child of the `taken` one. */
  async function reofferOnRemote(gitRoot: string, remote: string, id: string, token: number): Promise<{ ok: true; head: string } | { ok: false; why: string }> {
    const timeoutMs = config.git_timeout_seconds * 1000;
    try {
      const { head, record } = await readLease(gitRoot, remote, id, timeoutMs);
      if (record === null) return { ok: false, why: 'the remote has no lease record for it' };
      const next = reofferTaken(record, token, new Date(clock.now()).toISOString());
      if (!next.ok) return { ok: false, why: next.reason };
      const written = await writeLease(gitRoot, remote, next.record, head, timeoutMs);
      if (written.ok) return { ok: true, head: written.head };
      // A rejection's last line of git is its porcelain summary ("Done"): say what happened instead.
      return { ok: false, why: written.rejected || written.outcome === 'refused' ? 'the remote rejected the push' : written.why };
    } catch (error) {
      // readLease names an unreachable remote or an unreadable record: either way the chain did not move.
      return { ok: false, why: (error as Error).message };
    }
  }

  function resultData(source: Source, judgement: ReturnType<typeof judgeTakeover>, leg: 'out' | 'return') {
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

  function judgementEnvelope(data: ReturnType<typeof resultData>, code: 'diverged' | 'stale'): Envelope {
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

  async function readLeaseRecord(root: string): Promise<LeaseRecord | null> {
    try {
      return JSON.parse(await readFile(join(workspaceDir(root), LEASE_FILE), 'utf8')) as LeaseRecord;
    } catch {
      return null;
    }
  }

  /** This daemon's own cycle: the remote chain moves first (when the lease travels), then the machine. */
  async function acceptLocal(home: Workspace, cycle: Cycle, body: AcceptBody, receiverRoot: string, leg: 'out' | 'return'): Promise<Envelope> {
    const moved = await takeRemoteLease(home.root, cycle, body.as);
    if (!moved.ok) return moved.envelope;
    const event =
      leg === 'return'
        ? { type: 'RETURN_ACCEPTED' as const, executor: body.as, token: moved.token }
        : { type: 'HANDOFF_ACCEPTED' as const, executor: body.as, receiver_root: receiverRoot, token: moved.token };
    const { outcome, snapshot } = await registry.dispatch(home.root, event);
    if (outcome.code === 'accepted' && moved.head !== null) await registry.dispatch(home.root, { type: 'LEASE_HEAD', lease_head: moved.head });
    return outcomeEnvelope(outcome, snapshot);
  }

  /** Another machine's cycle: the push of a child lease record decides; only the winner imports it. */
  async function acceptRemote(source: Source, body: AcceptBody, receiverRoot: string): Promise<Envelope> {
    const lease = source.lease;
    if (lease === null) return failure('internal_error', 'a remote source without its lease', 'this is a bug');
    const next = claimOffer(lease.record, body.as, new Date(clock.now()).toISOString(), registry.find(receiverRoot)?.snapshot().context.lease.last_token);
    if (!next.ok) return failure('lease_held', next.reason, 'only one executor holds the lease');
    const token = next.record.holder?.token ?? 0;
    const importing = (head: string) => ({
      type: 'IMPORT_TAKEOVER' as const,
      cycle: { ...source.cycle, remote: { name: lease.remote, lease_head: head } },
      executor: body.as,
      token,
      receiver_root: receiverRoot,
    });
    // Asked of the pure machine before the chain moves: a receiver that cannot take the cycle now (paused,
    // evacuating, holding another) is refused while the lease is still on offer for someone else.
    const receiver = await registry.open(receiverRoot);
    const trial = step(receiver.snapshot(), { ...importing(lease.head), at: clock.now(), entropy: 'aaaaaa' });
    if (!trial.outcome.changed) return outcomeEnvelope(trial.outcome, receiver.snapshot());
    const timeoutMs = config.git_timeout_seconds * 1000;
    const written = await writeLease(receiverRoot, lease.remote, next.record, lease.head, timeoutMs);
    if (!written.ok) {
      if (!written.rejected) return unwrittenLease(lease.remote, source.cycle.id, written);
      const winner = await readLease(receiverRoot, lease.remote, source.cycle.id, timeoutMs);
      return failure(
        'lease_held',
        `another executor took cycle ${source.cycle.id} first${winner.record?.holder ? `: '${winner.record.holder.executor}' (token ${winner.record.holder.token})` : ''}`,
        'only one executor holds the lease',
      );
    }
    const { outcome, snapshot } = await registry.dispatch(receiverRoot, importing(written.head));
    if (outcome.changed) return outcomeEnvelope(outcome, snapshot);
    // Refused after all (the receiver moved since the trial): the take is undone on the chain, as after a failed checkout.
    const back = await reofferOnRemote(receiverRoot, lease.remote, source.cycle.id, token);
    if (back.ok) return outcomeEnvelope(outcome, snapshot);
    return failure(
      outcome.code,
      `${outcome.message ?? outcome.code}; the lease taken on '${lease.remote}' for this accept could not be offered again (${back.why}): token ${token} holds it there`,
      `free it with \`handoff lease break --reason REASON\` where the cycle is followed (the source), then offer or accept again`,
      { cycle: source.cycle.id, token },
    );
  }

  /** Moves the remote lease chain (when the cycle has one) before anything changes locally. */
  async function takeRemoteLease(
    gitRoot: string,
    cycle: Cycle,
    executor: string,
  ): Promise<{ ok: true; token: number | null; head: string | null } | { ok: false; envelope: Envelope }> {
    if (cycle.remote === null) return { ok: true, token: null, head: null };
    const timeoutMs = config.git_timeout_seconds * 1000;
    const { head, record } = await readLease(gitRoot, cycle.remote.name, cycle.id, timeoutMs);
    if (record === null || head === null)
      return { ok: false, envelope: failure('wrong_state', `the remote has no lease for cycle ${cycle.id}`, 'the source has not offered it yet') };
    // What this machine follows is judged first: a forged or rewritten chain is claimed from by nobody.
    const refused = await chainRefusal(gitRoot, cycle.remote.name, cycle.id, cycle.remote.lease_head, head);
    if (refused !== null) return { ok: false, envelope: refused };
    const next = claimOffer(record, executor, new Date(clock.now()).toISOString());
    if (!next.ok) return { ok: false, envelope: failure('lease_held', next.reason, 'only one executor holds the lease') };
    const written = await writeLease(gitRoot, cycle.remote.name, next.record, head, timeoutMs);
    if (written.ok) return { ok: true, token: next.record.holder?.token ?? null, head: written.head };
    if (!written.rejected) return { ok: false, envelope: unwrittenLease(cycle.remote.name, cycle.id, written) };
    const winner = await readLease(gitRoot, cycle.remote.name, cycle.id, timeoutMs);
    return {
      ok: false,
      envelope: failure(
        'lease_held',
        `another executor took cycle ${cycle.id} first${winner.record?.holder ? `: '${winner.record.holder.executor}' (token ${winner.record.holder.token})` : ''}`,
        'only one executor holds the lease; see `handoff status`',
      ),
    };
  }

  /** The cycle this checkout took over, and the token the holder acts with (given, or recorded at accept). */
  async function heldCycle(repo: string, given: number | undefined): Promise<Refused | { kind: 'held'; found: Candidate; token: number }> {
    const root = await deps.rootOf(repo);
    const found = receivingCycle(root);
    if (found === undefined)
      return refused(failure('wrong_state', `${root} holds no taken-over cycle`, 'run it in the checkout where you ran `handoff accept`'));
    // The journal is the truth (its receiver token); lease.json only mirrors it for people, so a crash
    // between journaling the accept and writing that file costs nothing.
    const record = await readLeaseRecord(root);
    const token = given ?? found.cycle.receiver?.token ?? (record?.cycle === found.cycle.id ? record.token : undefined);
    if (token === undefined) return refused(failure('stale_token', 'no lease token for this cycle', 'pass --token N (printed by `handoff accept`)'));
    return { kind: 'held', found, token };
  }

  function receivingCycle(root: string): Candidate | undefined {
    return candidates().find((c) => c.cycle.receiver?.root === root && c.state === 'TAKEOVER');
  }

  return {
    async verify(body: VerifyBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const data = resultData(judged.source, judged.judgement, body.return === true ? 'return' : 'out');
      return judged.judgement.code === 'verified' ? success('verified', data) : judgementEnvelope(data, judged.judgement.code);
    },

    /**
     * `progress` is the caller's: a caller that went away (Ctrl-C, a CLI that gave up) cancels the accept,
     * and only until the lease starts to move: after that it goes on, as nothing else would undo it.
     */
    async accept(body: AcceptBody, progress: Progress = unfollowed): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      await registry.open(receiverRoot);
      const judged = await judge(body, receiverRoot, progress);
      if (judged.kind === 'refused') return judged.envelope;
      const leg = body.return === true ? 'return' : 'out';
      const { source } = judged;
      const data = resultData(source, judged.judgement, leg);
      if (judged.judgement.code !== 'verified') return judgementEnvelope(data, judged.judgement.code);
      // The lease record's directory must exist, as a real directory, before the lease moves: a link or a
      // file in its way refuses the accept, not its answer. A remote's package is written after every
      // check passed and the caller is still there, before the lease moves, only into real directories.
      await realWorkspaceDir(receiverRoot);
      if (!progress.commit())
        return failure('interrupted', `the accept of cycle ${source.cycle.id} was cancelled before the lease moved`, 'nothing was changed; accept again');
      progress.phase(`taking the lease of cycle ${source.cycle.id}${source.lease === null ? '' : ` on '${source.lease.remote}'`}`);
      if (source.package !== null) {
        await materialize(receiverRoot, source.cycle.id, source.package);
        data.manifest = join(cycleDir(receiverRoot, source.cycle.id), source.lease?.record.manifest.path ?? '');
      }
      const accepted =
        source.home === null ? await acceptRemote(source, body, receiverRoot) : await acceptLocal(source.home, source.cycle, body, receiverRoot, leg);
      if (accepted.error) return accepted;
      const token = Number((accepted.data as { token?: number } | null)?.token);
      if (judged.receiver.checkout === 'would_move') {
        progress.phase(`moving this work tree to the checkpoint of cycle ${source.cycle.id}`);
        const moved = await carryOutCheckout(source, receiverRoot, leg === 'return').then(
          () => null,
          (error: unknown) => (error as Error).message,
        );
        // Checked before the lease moved (receiver.ts): only a cause that appeared since reaches here (a
        // smudge filter that fails, a disk that fills). The out leg's accept is undone; the return leg's
        // lease stays granted (the cycle is closed) and the answer says how to finish the move.
        if (moved !== null)
          return leg === 'out' ? undoAccept(source, body, receiverRoot, token, moved) : checkoutIncomplete(source, receiverRoot, leg, token, moved);
        data.checks = data.checks.map((c) =>
          c.name === 'work_tree' ? { ...c, status: 'ok', detail: 'the work tree was moved to the checkpoint after the lease was taken' } : c,
        );
      }
      const lease: LeaseRecord = { cycle: source.cycle.id, home: source.home?.root ?? receiverRoot, executor: body.as, token };
      // The lease is taken and journaled: a record that cannot be written must not turn the answer into a failure.
      const note = await writeFileAtomic(join(workspaceDir(receiverRoot), LEASE_FILE), `${JSON.stringify(lease, null, 2)}\n`, 0o600).then(
        () => null,
        (error: unknown) =>
          `the lease record could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); pass --token ${token} to return or close`,
      );
      return success('accepted', { ...data, token, state: (accepted.data as { state?: string }).state, executor: body.as, ...(note === null ? {} : { note }) });
    },

    /** `handoff return`: the holder hands back; its token comes from the call or from its lease record. */
    async returnLeg(body: ReturnBody): Promise<Envelope> {
      const held = await heldCycle(body.repo, body.token);
      if (held.kind === 'refused') return held.envelope;
      const { home } = held.found;
      // A travelling lease is asked on the chain first: a holder broken or replaced elsewhere is refused (stale_token) before a drain starts.
      const current = home.snapshot();
      const cycle = current.context.cycle;
      if (stateOf(current) === 'TAKEOVER' && leaseTravels(cycle, 'TAKEOVER') && current.context.lease.holder?.token === held.token) {
        const holds = await chain.holds(home.root, cycle.remote.name, cycle.id, cycle.remote.lease_head, held.token);
        if (!holds.ok) return holds.envelope;
      }
      const { outcome, snapshot } = await registry.dispatch(home.root, { type: 'RETURN_START', token: held.token, wait: body.wait ?? true });
      if (!outcome.changed && outcome.code === 'return_started') deps.startDrain(home.root);
      return outcomeEnvelope(outcome, snapshot);
    },

    async close(body: CloseBody): Promise<Envelope> {
      if (!body.one_way)
        return failure(
          'usage_error',
          'only a one-way cycle is closed by hand',
          'use `handoff close --one-way`; an emergency-return cycle closes when the primary accepts the return',
        );
      const held = await heldCycle(body.repo, body.token);
      if (held.kind === 'refused') return held.envelope;
      const home = held.found.home.root;
      // A travelling lease closes on the chain first (a `closed` record by the holder's token, judged against
      // what the remote holds now): a holder broken elsewhere is refused there, and the source follows the close.
      const current = registry.find(home)?.snapshot();
      const cycle = current?.context.cycle ?? null;
      let moved: ChainMoved | null = null;
      let untold: string | null = null;
      const paused = current !== undefined && (current.context.paused.global !== null || current.context.paused.workspace !== null);
      // Only a close the machine would make travels (the holder's token, closable, not paused); any other is refused below, unchanged.
      if (
        current !== undefined &&
        !paused &&
        leaseTravels(cycle, stateOf(current)) &&
        closableOneWay(cycle) &&
        current.context.lease.holder?.token === held.token
      ) {
        const close = await chain.close(home, cycle.remote.name, cycle.id, cycle.remote.lease_head, held.token);
        // Declined by the remote's own policy after the chain was read and judged (this token holds it there):
        // giving up a verified hold is safe, so the close goes on here and the answer says the source was not told.
        if (!close.ok && close.envelope.code === 'remote_refused') {
          untold = `${close.envelope.error?.message ?? 'the remote declined the closed record'}: the source still sees this holder; there, \`handoff lease break --reason REASON\` ends its wait`;
        } else if (!close.ok) return close.envelope;
        else moved = close;
      }
      const { outcome, snapshot } = await registry.dispatch(home, { type: 'CLOSE_ONE_WAY', token: held.token });
      if (moved !== null) await registry.dispatch(home, { type: 'LEASE_HEAD', lease_head: moved.head });
      const envelope = outcomeEnvelope(outcome, snapshot);
      return untold === null || envelope.error ? envelope : { ...envelope, data: { ...((envelope.data as object | null) ?? {}), note: untold } };
    },

    /**
     * Cycles on record in every known workspace (or one), each with its revisions checked: the latest
     * LIST_LATEST of each workspace, or all of them. Checking every manifest ever written would make
     * the everyday answer grow with history.
     */
    async list(repo: string | undefined, all = false): Promise<Envelope> {
      const roots = repo === undefined ? registry.all().map((w) => w.root) : [await deps.rootOf(repo)];
      const cycles = [];
      let total = 0;
      for (const root of roots) {
        const snapshot = registry.find(root)?.snapshot();
        const ids = await recordedCycles(root);
        total += ids.length;
        for (const id of all ? ids : ids.slice(-LIST_LATEST)) {
          const revisions = await cycleRevisions(root, id);
          const current = snapshot?.context.cycle?.id === id ? stateOf(snapshot) : null;
          const abandoned = await readAbandoned(root, id);
          cycles.push({
            cycle: id,
            workspace: root,
            state: current,
            revisions: revisions.length,
            integrity: revisions.every((r) => r.integrity === 'ok') ? 'ok' : 'failed',
            abandoned: abandoned.length > 0,
          });
        }
      }
      return success('cycles', {
        cycles,
        total,
        ...(cycles.length < total ? { note: `the latest ${LIST_LATEST} of each workspace: ${total} cycles on record (\`handoff list --all\`)` } : {}),
      });
    },

    async show(cycle: string): Promise<Envelope> {
      for (const workspace of registry.all()) {
        const ids = await recordedCycles(workspace.root);
        if (!ids.includes(cycle)) continue;
        const snapshot = workspace.snapshot();
        const isCurrent = snapshot.context.cycle?.id === cycle;
        return success('cycle', {
          cycle,
          workspace: workspace.root,
          state: isCurrent ? stateOf(snapshot) : null,
          revisions: await cycleRevisions(workspace.root, cycle),
          // `handoff cancel` records: the out leg's, and each return leg ended.
          abandoned: await readAbandoned(workspace.root, cycle),
          status: isCurrent ? statusView(snapshot, clock.now()) : null,
        });
      }
      return failure('unknown_cycle', `no cycle ${cycle} on record`, '`handoff list` shows the cycles on record');
    },

    /** For status in a receiver's checkout: the cycle it took over, if any. */
    receiving(root: string) {
      const found = receivingCycle(root);
      return found === undefined ? null : { cycle: found.cycle.id, home: found.home.root, holder: found.home.snapshot().context.lease.holder };
    },
  };
}

export type TakeoverService = ReturnType<typeof createTakeoverService>;
