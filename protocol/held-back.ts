import { assessNow } from './workspace-machine.js';
import { createStepScope, stateOf, step, type WorkspaceSnapshot } from './workspace-step.js';
import type { StageMove } from './stage-move-words.js';

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
    // A scope of its own: only a paused workspace steps here, and the answers that ask have none to lend.
    free = step(createStepScope(free), free, { type: 'PAUSE_SET', scope, pause: null, at: nowMs, entropy: 'aaaaaa' }).next;
  }
  return stateOf(free) === stateOf(snapshot) ? null : stageMove(free);
}
