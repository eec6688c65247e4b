import { join, relative } from 'node:path';
import {
  assess,
  cloneOfferText,
  contextText,
  decideContext,
  describeReading,
  packageFiles,
  pickupText,
  stageOf,
  stateOf,
  success,
  type Cycle,
  type Envelope,
  type WorkspaceSnapshot,
} from '../../protocol/index.js';
import type { AgentContextBody, Manifest } from '../../schemas/index.js';
import { readCapsule } from '../capsule/capsule-file.js';
import { capsuleQuality } from '../capsule/quality.js';
import type { Clock } from '../clock.js';
import { cycleDir } from '../evacuation/package-writer.js';
import type { Logger } from '../logger.js';
import { readManifest, type CloneOffer, type TakeoverService } from '../takeover/index.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import type { SessionActivity } from './session-activity.js';
import type { SessionRecords } from './session-records.js';

export interface AgentContextDeps {
  readonly registry: WorkspaceRegistry;
  readonly takeover: Pick<TakeoverService, 'receiving'>;
  readonly records: SessionRecords;
  readonly activity: SessionActivity;
  readonly clock: Clock;
  readonly resolveRoot: (dir: string) => Promise<string>;
  /** Config `context_reminder_after_tool_calls`. */
  readonly remindAfter: number;
  /** What the remote of a clone this daemon never served offers (takeover/clone-offers.ts), for its SessionStart pickup. */
  readonly cloneOffers: (root: string) => Promise<CloneOffer | null>;
  readonly log: Logger;
}

export interface AgentContextAnswer {
  readonly workspace: string;
  readonly state: string;
  readonly kind: string | null;
  /** What the hook injects into the agent's context; null: nothing now. */
  readonly text: string | null;
}

/** The leg on offer in a *_READY state and where its package is, relative to the repository. */
function offeredLeg(root: string, snapshot: WorkspaceSnapshot): { cycle: Cycle; manifest: string; handoff: string; expected: string | null } | null {
  const { cycle } = snapshot.context;
  const state = stateOf(snapshot);
  if (cycle === null || (state !== 'HANDOFF_READY' && state !== 'RETURN_HANDOFF_READY')) return null;
  const drain = state === 'RETURN_HANDOFF_READY' ? cycle.return_drain : cycle.drain;
  if (drain === null) return null;
  const files = packageFiles(drain.leg, drain.revision);
  const dir = cycleDir(root, cycle.id);
  return { cycle, manifest: join(dir, files.manifest), handoff: relative(root, join(dir, files.handoff)), expected: drain.manifests.at(-1) ?? null };
}

/**
 * `POST /v1/agent-context`: what the stage asks of one agent session, told once per stage per
 * session (protocol/agent-context.ts decides), and the pickup of a ready handoff at SessionStart.
 * Every request is served on the daemon's one event loop, so two hooks of one session that run at
 * once (parallel tool calls) cannot both be told: the first marks the record before any await.
 */
export function createAgentContextService(deps: AgentContextDeps) {
  const { registry, records, log } = deps;

  /** A checkout that took a cycle over works for that cycle's workspace, as `handoff drained` does. */
  async function homeOf(repo: string): Promise<string> {
    const root = await deps.resolveRoot(repo);
    return deps.takeover.receiving(root)?.home ?? root;
  }

  async function save(): Promise<void> {
    try {
      await records.save();
    } catch (error) {
      // The notice still goes out: a lost record costs one repeated notice after a restart.
      log.warn({ err: error }, 'could not save what the agent sessions were told');
    }
  }

  async function pickup(root: string, snapshot: WorkspaceSnapshot, session: string): Promise<string | null> {
    const leg = offeredLeg(root, snapshot);
    const state = stateOf(snapshot);
    if (leg === null || (state !== 'HANDOFF_READY' && state !== 'RETURN_HANDOFF_READY')) return null;
    let manifest: Manifest | null = null;
    let problem: string | null = null;
    try {
      manifest = (await readManifest(leg.manifest, leg.expected)).manifest;
    } catch (error) {
      problem = (error as Error).message;
    }
    return pickupText({ state, workspace: root, cycle: leg.cycle.id, session, handoffPath: leg.handoff, manifest, problem });
  }

  async function offeredToClone(root: string, session: string): Promise<string | null> {
    try {
      const offer = await deps.cloneOffers(root);
      return offer === null ? null : cloneOfferText(root, offer.remote, offer.cycles, session);
    } catch (error) {
      // An unreachable or refusing remote costs this session its pickup, never its start.
      log.info({ err: error, workspace: root }, 'the offers on the remote of a clone could not be read');
      return null;
    }
  }

  return {
    async tell(body: AgentContextBody): Promise<Envelope> {
      const root = await homeOf(body.repo);
      deps.activity.hookEvent(root, body.event, deps.clock.now());
      const workspace = registry.find(root);
      // A repository the daemon never saw has had no stage yet: nothing to tell, unless a new session
      // starts in a clone whose remote offers a handoff (a receiver's fresh clone on another machine).
      if (workspace === undefined) {
        const text = body.event === 'SessionStart' ? await offeredToClone(root, body.session) : null;
        return success('agent_context', { workspace: root, state: 'NORMAL', kind: null, text } satisfies AgentContextAnswer);
      }
      const snapshot = workspace.snapshot();
      const state = stateOf(snapshot);
      const { context } = snapshot;
      const view = stageOf(state, context);
      const before = records.get(root, body.session);
      const { record, kind } = decideContext(before, view, body.event, body.session, deps.remindAfter);
      if (record !== before) records.set(root, body.session, record);
      if (body.event === 'SessionStart') {
        if (before !== null) await save();
        // The session's own SessionStart event may have registered the clone a moment ago: with no cycle
        // here, the remote's offer is still the one to tell.
        const fresh = state === 'NORMAL' && context.cycle === null;
        const text = (await pickup(root, snapshot, body.session)) ?? (fresh ? await offeredToClone(root, body.session) : null);
        return success('agent_context', { workspace: root, state, kind: null, text } satisfies AgentContextAnswer);
      }
      if (kind === null) return success('agent_context', { workspace: root, state, kind, text: null } satisfies AgentContextAnswer);
      // The record is marked already; the file is written before the answer, like every promise kept across a restart.
      const saved = save();
      const { worst } = assess(Object.values(context.readings), deps.clock.now(), context.policy);
      const asksCapsule = kind === 'prepare' || kind === 'reminder';
      const quality = asksCapsule ? await capsuleQuality(root, (await readCapsule(root)).capsule, context) : null;
      const leg = offeredLeg(root, snapshot);
      const text = contextText(kind, {
        workspace: root,
        session: body.session,
        view,
        cycle: context.cycle?.id ?? null,
        pressure: worst === null ? null : describeReading(worst),
        quality,
        toolCalls: record?.tool_calls ?? 0,
        handoffPath: leg?.handoff ?? null,
      });
      await saved;
      log.info({ workspace: root, session: body.session, state, kind }, 'agent session told its stage');
      return success('agent_context', { workspace: root, state, kind, text } satisfies AgentContextAnswer);
    },

    flush: () => records.flush(),
  };
}

export type AgentContextService = ReturnType<typeof createAgentContextService>;
