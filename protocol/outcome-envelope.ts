import { isSuccess } from './codes.js';
import { failure, success, type Envelope } from './envelope.js';
import { heldBack } from './held-back.js';
import type { Outcome } from './workspace-machine.js';
import { stateOf, type WorkspaceSnapshot } from './workspace-step.js';

/** The answer to a caller after the machine handled its event: the outcome, with where the workspace now stands. */
export function outcomeEnvelope(outcome: Outcome, snapshot: WorkspaceSnapshot): Envelope {
  const where = { workspace: snapshot.context.root, state: stateOf(snapshot) };
  if (!isSuccess(outcome.code)) {
    return failure(outcome.code, outcome.message ?? outcome.code, outcome.hint ?? 'see `handoff status`', { ...where, ...outcome.data });
  }
  // A reading the kill switch holds back is answered with what it would have done (held_back).
  const held = heldBack(snapshot, snapshot.context.now);
  return success(outcome.code, { ...where, ...outcome.data, changed: outcome.changed, note: outcome.message, ...(held === null ? {} : { held_back: held }) });
}
