import { join } from 'node:path';
import {
  acceptCommand,
  failure,
  packageFiles,
  packagesRef,
  stateOf,
  type Cycle,
  type DrainProgress,
  type Envelope,
  type RemoteLeaseRecord,
  type WorkspaceState,
} from '../../protocol/index.js';
import type { Config, VerifyBody } from '../../schemas/index.js';
import { runGit } from '../git/index.js';
import { readLease, readPackages } from '../evacuation/remote-records.js';
import { cycleDir } from '../evacuation/package-writer.js';
import type { Progress } from '../operations/index.js';
import type { Workspace } from '../workspaces/workspace.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { frozenWithheld } from './frozen-withheld.js';
import { importedCycle } from './imported-cycle.js';
import { offeredCyclesOn } from './remote-offers.js';
import { proveTravellingPackage, readManifest, type ManifestRecord } from './records.js';

type Refused = { readonly kind: 'refused'; readonly envelope: Envelope };
const refused = (envelope: Envelope): Refused => ({ kind: 'refused', envelope });

/** Where the record to verify comes from: a cycle of this daemon (home) or one read from a remote. */
export interface Source {
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
 * Which cycle a verify or accept is about, and its records: one offered by a workspace of this daemon,
 * or one read from a remote and proven in memory. Nothing here moves the receiver or the lease.
 */
export function createSources(deps: { readonly registry: WorkspaceRegistry; readonly config: Config }) {
  const { registry, config } = deps;

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
      `name the cycle: ${ready.map((c) => `\`${acceptCommand(c.cycle.id)}\``).join(' or ')}`,
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
          `its daemon follows the lease on the remote; run \`${acceptCommand(body.cycle ?? 'CYCLE', { leg: 'return' })}\` there`,
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
      `name the cycle: ${ready.map((id) => `\`${acceptCommand(id, { from: remote })}\``).join(' or ')}`,
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

  return { localSource, remoteSource };
}

export type Sources = ReturnType<typeof createSources>;
