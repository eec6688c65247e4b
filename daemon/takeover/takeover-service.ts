import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  failure,
  judgeTakeover,
  outcomeEnvelope,
  packageFiles,
  stateOf,
  statusView,
  success,
  type Cycle,
  type DrainProgress,
  type Envelope,
  type ReceiverObservation,
  type WorkspaceState,
} from '../../protocol/index.js';
import type { AcceptBody, CloseBody, Config, ReturnBody, VerifyBody } from '../../schemas/index.js';
import type { Clock } from '../clock.js';
import { runGit } from '../git/index.js';
import { writeFileAtomic } from '../store/index.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { workspaceDir } from '../workspaces/workspace-dir.js';
import { cycleDir } from '../evacuation/package-writer.js';
import { bringToReturned, observeReceiver, switchToCheckpoint } from './receiver.js';
import { cycleRevisions, readManifest, recordedCycles } from './records.js';

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
    if (ready.length === 0) return failure('unknown_cycle', `no cycle of this repository is ${wanted}`, 'wait for the source to reach it, see `handoff status` there');
    return failure('ambiguous', `${ready.length} cycles are ${wanted}: ${ready.map((c) => c.cycle.id).join(', ')}`, 'name the cycle: `handoff accept CYCLE --as EXECUTOR`', { cycles: ready.map((c) => ({ cycle: c.cycle.id, workspace: c.home.root })) });
  }

  async function rootCommits(root: string): Promise<string[]> {
    const result = await runGit(['rev-list', '--max-parents=0', 'HEAD'], { cwd: root });
    return result.code === 0 ? result.stdout.split('\n').filter(Boolean) : [];
  }

  /** Everything but the lease: integrity, identity, commit, work tree, instructions, recency. */
  async function judge(body: VerifyBody, receiverRoot: string, mode: 'verify' | 'accept') {
    const picked = await pick(body, receiverRoot);
    if ('authority' in picked) return { kind: 'refused' as const, envelope: picked };
    const { home, cycle, state } = picked;
    const wantReturn = body.return === true;
    const { drain, offered } = legOf(cycle, wantReturn);
    const packaged = drain?.steps.package;
    if (state !== offered || drain === null || packaged === undefined) {
      const taken = state === 'TAKEOVER' || state === 'RETURN_HANDOFF_READY' || state === 'CLOSED';
      const holder = home.snapshot().context.lease.holder;
      if (taken && !(wantReturn && state === 'RETURN_HANDOFF_READY')) {
        return { kind: 'refused' as const, envelope: failure('lease_held', `cycle ${cycle.id} was already taken${holder ? ` by '${holder.executor}'` : ''} (${state})`, 'only one executor holds the lease; see `handoff status` in the source repository') };
      }
      return { kind: 'refused' as const, envelope: failure('wrong_state', `cycle ${cycle.id} is ${state}, not ${offered}`, 'wait until the source offers it; `handoff status` there says why not') };
    }
    const paused = home.snapshot().context.paused;
    if (paused.global !== null || paused.workspace !== null) {
      return { kind: 'refused' as const, envelope: failure('paused_denied', `the source workspace is paused (${(paused.workspace ?? paused.global)?.path ?? ''})`, 'run `handoff unpause` first') };
    }
    const files = packageFiles(drain.leg, drain.revision);
    const record = await readManifest(join(cycleDir(home.root, cycle.id), files.manifest), drain.manifests.at(-1) ?? null);
    const frozenTree = wantReturn ? str(cycle.drain.steps.snapshot?.summary['tree']) : null;
    const checkpoint = record.manifest.checkpoint;
    const observe = (move: ReceiverObservation['checkout'] | 'real') =>
      observeReceiver(receiverRoot, {
        manifest: record.manifest,
        frozenTree,
        timeoutMs: config.git_timeout_seconds * 1000,
        move: async (tree, clean) => {
          if (body.checkout !== true) return 'not_requested';
          const movable = wantReturn ? tree === frozenTree : clean;
          if (!movable) return 'refused_dirty';
          if (move !== 'real') return 'would_move';
          if (wantReturn) await bringToReturned(receiverRoot, frozenTree ?? '', checkpoint.tree ?? '');
          else await switchToCheckpoint(receiverRoot, checkpoint.commit ?? '');
          return 'done';
        },
      });
    // Look before moving anything: only a checkout that passes every other check is carried out.
    let receiver = await observe('would_move');
    let judgement = judgeTakeover(record.manifest, receiver, clock.now(), config.takeover_max_age_hours);
    if (mode === 'accept' && judgement.code === 'verified' && receiver.checkout === 'would_move') {
      receiver = await observe('real');
      judgement = judgeTakeover(record.manifest, receiver, clock.now(), config.takeover_max_age_hours);
    }
    return { kind: 'judged' as const, home, cycle, record, judgement, receiver };
  }

  function resultData(home: Workspace, cycle: Cycle, record: { path: string; sha256: string }, judgement: ReturnType<typeof judgeTakeover>, leg: 'out' | 'return') {
    return { cycle: cycle.id, leg, workspace: home.root, manifest: record.path, manifest_sha256: record.sha256, checks: judgement.checks };
  }

  function judgementEnvelope(data: ReturnType<typeof resultData>, code: 'diverged' | 'stale'): Envelope {
    const failed = data.checks.filter((c) => c.status === 'failed').map((c) => `${c.name}: ${c.detail}`);
    return failure(code, failed.join('; '), code === 'stale' ? 'ask the source for a fresh handoff (`handoff now` there)' : 'real state wins: reconcile the checkout (or use --checkout on a clean one), then verify again', data);
  }

  async function readLeaseRecord(root: string): Promise<LeaseRecord | null> {
    try {
      return JSON.parse(await readFile(join(workspaceDir(root), LEASE_FILE), 'utf8')) as LeaseRecord;
    } catch {
      return null;
    }
  }

  function receivingCycle(root: string): Candidate | undefined {
    return candidates().find((c) => c.cycle.receiver?.root === root && c.state === 'TAKEOVER');
  }

  return {
    async verify(body: VerifyBody): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      const judged = await judge(body, receiverRoot, 'verify');
      if (judged.kind === 'refused') return judged.envelope;
      const data = resultData(judged.home, judged.cycle, judged.record, judged.judgement, body.return === true ? 'return' : 'out');
      return judged.judgement.code === 'verified' ? success('verified', data) : judgementEnvelope(data, judged.judgement.code);
    },

    async accept(body: AcceptBody): Promise<Envelope> {
      const receiverRoot = await deps.rootOf(body.repo);
      await registry.open(receiverRoot);
      const judged = await judge(body, receiverRoot, 'accept');
      if (judged.kind === 'refused') return judged.envelope;
      const leg = body.return === true ? 'return' : 'out';
      const data = resultData(judged.home, judged.cycle, judged.record, judged.judgement, leg);
      if (judged.judgement.code !== 'verified') return judgementEnvelope(data, judged.judgement.code);
      const event = leg === 'return' ? { type: 'RETURN_ACCEPTED' as const, executor: body.as } : { type: 'HANDOFF_ACCEPTED' as const, executor: body.as, receiver_root: receiverRoot };
      const { outcome, snapshot } = await registry.dispatch(judged.home.root, event);
      if (outcome.code !== 'accepted') return outcomeEnvelope(outcome, snapshot);
      const token = Number(outcome.data?.['token']);
      const lease: LeaseRecord = { cycle: judged.cycle.id, home: judged.home.root, executor: body.as, token };
      await mkdir(workspaceDir(receiverRoot), { recursive: true });
      await writeFileAtomic(join(workspaceDir(receiverRoot), LEASE_FILE), `${JSON.stringify(lease, null, 2)}\n`, 0o600);
      return success('accepted', { ...data, token, state: stateOf(snapshot), executor: body.as });
    },

    /** `handoff return`: the holder hands back; its token comes from the call or from its lease record. */
    async returnLeg(body: ReturnBody): Promise<Envelope> {
      const root = await deps.rootOf(body.repo);
      const found = receivingCycle(root);
      if (found === undefined) return failure('wrong_state', `${root} holds no taken-over cycle`, 'run `handoff return` in the checkout where you ran `handoff accept`');
      const record = await readLeaseRecord(root);
      const token = body.token ?? (record?.cycle === found.cycle.id ? record.token : undefined);
      if (token === undefined) return failure('stale_token', 'no lease token for this cycle', 'pass --token N (printed by `handoff accept`)');
      const { outcome, snapshot } = await registry.dispatch(found.home.root, { type: 'RETURN_START', token, wait: body.wait ?? true });
      if (!outcome.changed && outcome.code === 'return_started') deps.startDrain(found.home.root);
      return outcomeEnvelope(outcome, snapshot);
    },

    async close(body: CloseBody): Promise<Envelope> {
      if (!body.one_way) return failure('usage_error', 'only a one-way cycle is closed by hand', 'use `handoff close --one-way`; an emergency-return cycle closes when the primary accepts the return');
      const root = await deps.rootOf(body.repo);
      const found = receivingCycle(root);
      if (found === undefined) return failure('wrong_state', `${root} holds no taken-over cycle`, 'run it in the checkout where you accepted');
      const record = await readLeaseRecord(root);
      const token = body.token ?? (record?.cycle === found.cycle.id ? record.token : undefined);
      if (token === undefined) return failure('stale_token', 'no lease token for this cycle', 'pass --token N');
      const { outcome, snapshot } = await registry.dispatch(found.home.root, { type: 'CLOSE_ONE_WAY', token });
      return outcomeEnvelope(outcome, snapshot);
    },

    /** Cycles on record in every known workspace (or one), each with its revisions checked. */
    async list(repo: string | undefined): Promise<Envelope> {
      const roots = repo === undefined ? registry.all().map((w) => w.root) : [await deps.rootOf(repo)];
      const cycles = [];
      for (const root of roots) {
        const snapshot = registry.find(root)?.snapshot();
        for (const id of await recordedCycles(root)) {
          const revisions = await cycleRevisions(root, id);
          const current = snapshot?.context.cycle?.id === id ? stateOf(snapshot) : null;
          cycles.push({ cycle: id, workspace: root, state: current, revisions: revisions.length, integrity: revisions.every((r) => r.integrity === 'ok') ? 'ok' : 'failed' });
        }
      }
      return success('cycles', { cycles });
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
