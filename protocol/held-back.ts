import { assessNow, type WorkspaceState } from './workspace-machine.js';
import { stateOf, step, type WorkspaceSnapshot } from './workspace-step.js';

/** A stage the readings call for, with the reading that calls for it (null when a reading did not). */
export interface StageMove {
  readonly state: WorkspaceState;
  readonly metric: string | null;
  readonly percent: number | null;
  readonly source: string | null;
}

/** The stage a snapshot is in, with the worst reading the machine judges by (since the last `handoff cancel`). */
export function stageMove(snapshot: WorkspaceSnapshot): StageMove {
  const worst = assessNow(snapshot.context).worst;
  return { state: stateOf(snapshot), metric: worst?.metric ?? null, percent: worst?.used_percent ?? null, source: worst?.source ?? null };
}

/**
 * What the kill switch holds back: where the workspace would be at `nowMs` without it, or null when
 * it holds nothing back. Found by stepping the machine through the unpause itself, so the words can
 * never promise a move `handoff unpause` would not make.
 */
export function heldBack(snapshot: WorkspaceSnapshot, nowMs: number): StageMove | null {
  let free = snapshot;
  for (const scope of ['workspace', 'global'] as const) {
    if (free.context.paused[scope] === null) continue;
    free = step(free, { type: 'PAUSE_SET', scope, pause: null, at: nowMs, entropy: 'aaaaaa' }).next;
  }
  return free === snapshot || stateOf(free) === stateOf(snapshot) ? null : stageMove(free);
}

/** "EVACUATE: five_hour 95 %" — the stage and the reading that calls for it. */
export function stageMoveWords(move: StageMove): string {
  return `${move.state}${callWords(move)}`;
}

const callWords = (move: StageMove): string => (move.percent === null ? '' : `: ${move.metric} ${move.percent} %`);

/** A stage that started when the kill switch was lifted, in the workspace it started in. */
export interface StageStarted extends StageMove {
  readonly workspace: string;
  readonly cycle: string | null;
}

/** What `handoff unpause` started: "EVACUATE starts now: five_hour 95 %; pushing handoff/<cycle> …". */
export function stageStartedWords(started: StageStarted): string {
  const what = `${started.state} starts now in ${started.workspace}${callWords(started)}`;
  if (started.state === 'EVACUATE') return `${what}; the daemon checkpoints the work onto handoff/${started.cycle ?? '…'} — \`handoff status\` follows it`;
  if (started.state === 'PREPARE') return `${what}; the agent refreshes its capsule`;
  return what;
}
