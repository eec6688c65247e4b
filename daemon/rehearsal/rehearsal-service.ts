import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { formatCycleId, HandoffError, stateOf, type WorkspaceState } from '../../protocol/index.js';
import type { Config, WayOut } from '../../schemas/index.js';
import type { Clock, Monotonic } from '../clock.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { writeLocalPackage } from './local-package.js';
import { validateAhead } from './validation-evidence.js';
import { proveWayOut } from './way-out-probe.js';
import { treeFingerprint } from './tree-fingerprint.js';

export interface RehearsalDeps {
  readonly registry: WorkspaceRegistry;
  readonly config: Pick<Config, 'rehearsal' | 'git_timeout_seconds' | 'secret_scan' | 'validation'>;
  readonly clock: Clock;
  /** The validation's duration at PREPARE (`rehearsal.validate`). */
  readonly monotonic: Monotonic;
  readonly entropy: () => string;
  readonly stateDir: string;
  readonly log: Logger;
  /** Whether a drain runs for the workspace: a rehearsal never competes with one. */
  readonly draining: (root: string) => boolean;
  /** The daemon's own environment, which the proof is about. */
  readonly env: NodeJS.ProcessEnv;
}

/** Where a rehearsal may run: before any evacuation of the cycle began. */
const REHEARSABLE: readonly WorkspaceState[] = ['NORMAL', 'PREPARE'];
/** Where one is tried by itself: PREPARE only (`handoff doctor` asks in NORMAL too). */
const AUTOMATIC: readonly WorkspaceState[] = ['PREPARE'];

/**
 * PREPARE's rehearsal of the evacuation: on entering PREPARE, again while in PREPARE once the last one is
 * `rehearsal.interval_seconds` old and the tree moved, and on demand (`handoff doctor`). One at a time
 * across the daemon, never while a drain runs, so it never competes with the agent or the evacuation;
 * its verdict goes through the workspace's machine (WAY_OUT, journaled) so every view reads the same.
 */
export function createRehearsals(deps: RehearsalDeps) {
  const { registry, clock, log } = deps;
  const timeoutMs = deps.config.git_timeout_seconds * 1000;
  const dir = join(deps.stateDir, 'rehearsal');
  const pending = new Map<string, Promise<WayOut | null>>();
  const fingerprints = new Map<string, string>();
  let chain: Promise<unknown> = Promise.resolve();

  const paused = (root: string): boolean => {
    const { global, workspace } = registry.find(root)?.snapshot().context.paused ?? { global: null, workspace: null };
    return global !== null || workspace !== null;
  };
  // The kill switch holds the rehearsal too: its probe is a push, however short-lived.
  const stateIn = (root: string, states: readonly WorkspaceState[]): boolean => {
    const workspace = registry.find(root);
    return workspace !== undefined && states.includes(stateOf(workspace.snapshot())) && !deps.draining(root) && !paused(root);
  };

  async function once(root: string, states: readonly WorkspaceState[]): Promise<WayOut | null> {
    if (!stateIn(root, states)) return null;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const fingerprint = await treeFingerprint(root, timeoutMs);
    const started = clock.now();
    const proved = await proveWayOut(root, {
      timeoutMs,
      probeCycle: formatCycleId(started, deps.entropy()),
      pendingFile: join(dir, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.probe.json`),
      env: deps.env,
      stillWanted: () => stateIn(root, REHEARSABLE),
    }).catch((error: unknown) => ({
      state: 'unknown' as const,
      cause: `the rehearsal could not finish: ${(error as Error).message}`.slice(0, 1000),
      fix: null,
      remote: null,
      proven: [],
    }));
    if (proved === null) return null;
    fingerprints.set(root, fingerprint);
    const wayOut: WayOut = { ...proved, checked_at: new Date(clock.now()).toISOString() };
    // Said at once: the scan below may take its whole budget.
    await registry.dispatch(root, { type: 'WAY_OUT', way_out: wayOut });
    const fields = { workspace: root, state: wayOut.state, remote: wayOut.remote, cause: wayOut.cause, ms: clock.now() - started };
    if (wayOut.state === 'blocked') log.warn(fields, 'the way out is blocked');
    else log.info(fields, 'rehearsed the evacuation');
    const wanted = () => stateIn(root, REHEARSABLE);
    const packageStarted = clock.now();
    // The local package (the secret scan into the verdict cache, the snapshot's tree and index): EVACUATE starts from it.
    const scan = wanted()
      ? await writeLocalPackage(root, {
          dir,
          stateDir: deps.stateDir,
          config: deps.config,
          now: () => clock.now(),
          id: deps.entropy(),
          stillWanted: wanted,
        }).catch((error: unknown) => {
          log.warn({ workspace: root, err: error }, 'the local package could not be written; the drain takes its full path');
          return null;
        })
      : null;
    if (scan === null) {
      log.info({ workspace: root }, 'the local package stopped early; the drain scans the rest itself');
      return wayOut;
    }
    log.info({ workspace: root, tree: scan.tree, judged: scan.judged, ms: clock.now() - packageStarted }, 'wrote the local package');
    const validated = await validateAtPrepare(root);
    if (wayOut.state !== 'proven') return wayOut;
    const scanned = `secret scan done ahead: ${scan.judged} changed file(s)${scan.withheld === 0 ? '' : `, ${scan.withheld} would be withheld`}`;
    const withScan: WayOut = { ...wayOut, proven: [...wayOut.proven, scanned, 'snapshot packaged locally', ...(validated === null ? [] : [validated])] };
    await registry.dispatch(root, { type: 'WAY_OUT', way_out: withScan });
    return withScan;
  }

  /** `rehearsal.validate`: the validation command once at PREPARE (not for `handoff doctor` in NORMAL); what it proved, in a few words. */
  async function validateAtPrepare(root: string): Promise<string | null> {
    const command = deps.config.validation.command;
    if (deps.config.rehearsal.validate === 'off' || command === null || !stateIn(root, AUTOMATIC)) return null;
    const { validation, ran } = await validateAhead(root, {
      dir,
      command,
      timeoutMs: deps.config.validation.timeout_seconds * 1000,
      gitTimeoutMs: timeoutMs,
      now: () => clock.now(),
      monotonic: () => deps.monotonic.now(),
    });
    log.info({ workspace: root, status: validation.status, ms: validation.duration_ms, ran }, 'validated at PREPARE');
    return `validation ${validation.status} at PREPARE (${Math.round((validation.duration_ms ?? 0) / 1000)} s)`;
  }

  /** Queued behind any other rehearsal; a second ask for the same workspace shares the one in flight. */
  function rehearse(root: string, states: readonly WorkspaceState[]): Promise<WayOut | null> {
    const running = pending.get(root);
    if (running !== undefined) return running;
    const run = chain.then(() => once(root, states)).finally(() => pending.delete(root));
    chain = run.catch(() => undefined);
    pending.set(root, run);
    return run;
  }

  const background = (root: string) =>
    void rehearse(root, AUTOMATIC).catch((error: unknown) => log.error({ err: error, workspace: root }, 'the rehearsal failed'));

  return {
    /** The machine's `startRehearsal` effect (entering PREPARE). */
    start(root: string): void {
      if (deps.config.rehearsal.enabled) background(root);
    },

    /** The repeating check: a workspace in PREPARE whose last rehearsal is old and whose tree moved gets another. */
    async tick(): Promise<void> {
      if (!deps.config.rehearsal.enabled) return;
      for (const workspace of registry.all()) {
        const { root } = workspace;
        if (pending.has(root) || !stateIn(root, AUTOMATIC)) continue;
        const checked = workspace.snapshot().context.way_out?.checked_at ?? null;
        if (checked !== null && clock.now() - Date.parse(checked) < deps.config.rehearsal.interval_seconds * 1000) continue;
        // After a restart the last tree is not known: the first check rehearses again.
        if (checked !== null && fingerprints.get(root) === (await treeFingerprint(root, timeoutMs))) continue;
        background(root);
      }
    },

    /** `handoff doctor`: a rehearsal now, in any state before an evacuation began. */
    async now(root: string): Promise<WayOut> {
      if (paused(root)) {
        throw new HandoffError(
          'paused_denied',
          'the workspace is paused, so nothing is rehearsed (its probe is a push)',
          'run `handoff unpause`, then `handoff doctor` again',
        );
      }
      const wayOut = await rehearse(root, REHEARSABLE);
      if (wayOut === null) {
        throw new HandoffError(
          'wrong_state',
          'an evacuation has begun in this workspace, so nothing is rehearsed: the drain itself is the test now',
          '`handoff status` shows the drain and the way out the last rehearsal found',
        );
      }
      return wayOut;
    },

    /** Settles once no rehearsal runs (shutdown). */
    idle: (): Promise<void> => chain.then(() => undefined),
  };
}

export type Rehearsals = ReturnType<typeof createRehearsals>;
