import { and, not, setup } from 'xstate';
import type { WorkspaceEvent } from './workspace-events.js';
import { runningDrain } from './running-drain.js';
import {
  drainActions,
  guards,
  initialContext,
  leaseActions,
  pressureActions,
  returnActions,
  settingsActions,
  stageActions,
  type WorkspaceContext,
  type WorkspaceInput,
} from './machine/index.js';

// The machine's assembly: its states and where each event moves them. The context, guards and actions
// live in machine/, grouped by what they are about; this module keeps the names every importer uses.
export { STATES, assessNow, closableOneWay, drainKey, offerTravels } from './machine/index.js';
export type { Cycle, Outcome, Trigger, WorkspaceContext, WorkspaceInput, WorkspaceState } from './machine/index.js';
export type { Profile } from '../schemas/config.schema.js';
// Re-exported so the machine's other readers keep one import; the CLI imports running-drain.js itself.
export { runningDrain };

/** What a running drain reports, the same in either leg (EVACUATE, TAKEOVER.returning). */
const DRAIN_REPORTS = {
  DRAIN_BLOCKED: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordBlocked'] }],
  DRAINED: { actions: ['stamp', 'recordDrained'] },
  DRAIN_WAITED: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordWaited'] }],
  DRAIN_STEP_DONE: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'recordStep'] }],
  DRAIN_REVISION: [{ guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] }, { actions: ['stamp', 'startRevision'] }],
  DRAIN_RESUME: [{ guard: 'paused', actions: ['stamp', 'replyPaused'] }, { actions: ['stamp', 'clearBlocked'] }],
} as const;

export const workspaceMachine = setup({
  types: {} as { context: WorkspaceContext; events: WorkspaceEvent; input: WorkspaceInput },
  guards,
  actions: { ...stageActions, ...pressureActions, ...drainActions, ...leaseActions, ...returnActions, ...settingsActions },
}).createMachine({
  id: 'workspace',
  initial: 'NORMAL',
  context: initialContext,
  // Events that mean the same in every state; states override where they move. xstate tries the
  // deepest state's handlers first and the root's last, so what stands here is what is left over.
  on: {
    READING: { actions: ['stamp', 'recordReading'] },
    WARNING: { actions: ['stamp', 'recordWarning'] },
    PAUSE_SET: { actions: ['stamp', 'setPause'] },
    // A policy changed at start or live (`handoff config set`): NORMAL and PREPARE judge their readings
    // against the new lines at once (their `always`), so a lowered line they are above moves them; EVACUATE
    // and every later stage have no such rule, so no threshold ever moves a cycle back.
    CONFIG_SET: { actions: ['stamp', 'setPolicy'] },
    // The kill switch stops new authority too: the lease is not handed out while paused (docs/http-api.md).
    LEASE_ACQUIRE: [{ guard: 'paused', actions: ['stamp', 'replyPaused'] }, { actions: ['stamp', 'leaseAcquire'] }],
    LEASE_RENEW: { actions: ['stamp', 'leaseRenew'] },
    LEASE_RELEASE: { actions: ['stamp', 'leaseRelease'] },
    LEASE_BREAK: { actions: ['stamp', 'leaseBreak'] },
    CAPSULE_SET: { actions: ['stamp', 'recordCapsule'] },
    LEASE_HEAD: { actions: ['stamp', 'recordLeaseHead'] },
    WAY_OUT: { actions: ['stamp', 'recordWayOut'] },
    // A state with something to end takes CANCEL itself; everywhere else there is nothing to cancel.
    CANCEL: { actions: ['stamp', 'replyNothingToCancel'] },
    // Not allowed here: every event no state takes (or whose guards all fail) is answered `wrong_state`,
    // naming the state and its way on (stateHint); nothing changes.
    '*': { actions: 'replyWrongState' },
  },
  states: {
    NORMAL: {
      entry: [{ type: 'enterStage', params: { stage: 'NORMAL' } }, 'clearPrepare'],
      always: [
        { guard: and([not('paused'), 'atEvacuateLine']), target: 'EVACUATE', actions: 'startTelemetryCycle' },
        { guard: and([not('paused'), 'atPrepareLine']), target: 'PREPARE' },
      ],
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'importTakeover'] },
        ],
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'PREPARE', actions: ['stamp', 'replyPrepareEntered'] },
        ],
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
      },
    },
    PREPARE: {
      entry: [{ type: 'enterStage', params: { stage: 'PREPARE' } }, 'markPrepare', 'startRehearsal'],
      always: [
        { guard: and([not('paused'), 'atEvacuateLine']), target: 'EVACUATE', actions: 'startTelemetryCycle' },
        { guard: and([not('paused'), 'canRelax']), target: 'NORMAL' },
      ],
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'importTakeover'] },
        ],
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: { actions: ['stamp', 'replyAlreadyPrepare'] },
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
        // A way out, so allowed while paused: it starts nothing and hands no authority to anyone.
        CANCEL: { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
      },
    },
    EVACUATE: {
      entry: [{ type: 'enterStage', params: { stage: 'EVACUATE' } }, 'startDrain'],
      on: {
        NOW: { actions: ['stamp', 'replyAlreadyEvacuating'] },
        ...DRAIN_REPORTS,
        CANCEL: [
          { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
          { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
        ],
        CHECKPOINT_VERIFIED: [
          { guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] },
          { guard: 'checkpointVerified', target: 'HANDOFF_READY', actions: ['stamp', 'offerLease'] },
          { actions: ['stamp', 'recordUnverified'] },
        ],
      },
    },
    HANDOFF_READY: {
      entry: { type: 'enterStage', params: { stage: 'HANDOFF_READY' } },
      on: {
        HANDOFF_ACCEPTED: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'grantAccepted'] },
        ],
        // Withdraws the offer: no receiver took it yet, and one that tries now is refused.
        CANCEL: [
          { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
          { target: 'NORMAL', actions: ['stamp', 'cancelCycle'] },
        ],
        // Another machine took the lease through the remote: this source is frozen from now on.
        REMOTE_LEASE: [{ guard: 'remoteTaken', target: 'TAKEOVER', actions: ['stamp', 'applyRemoteTaken'] }, { actions: ['stamp', 'replyAlreadyCurrent'] }],
      },
    },
    // Public and journaled as 'TAKEOVER' (stateOf); the children only say whether the return leg's
    // drain runs, and restoring a journal picks the child from the cycle (restoreSnapshot).
    TAKEOVER: {
      entry: { type: 'enterStage', params: { stage: 'TAKEOVER' } },
      initial: 'held',
      on: {
        // `handoff return` starts the return leg; again from the current holder it is a no-op, or it
        // takes the leg's fence over after the lease changed hands (startReturn), and the drain goes on.
        RETURN_START: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
          { target: '.returning', actions: ['stamp', 'startReturn'] },
        ],
        CLOSE_ONE_WAY: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
          { guard: 'closable', target: 'CLOSED', actions: ['stamp', 'replyClosed'] },
        ],
        REMOTE_LEASE: [
          { guard: 'remoteReturned', target: 'RETURN_HANDOFF_READY', actions: ['stamp', 'applyRemoteReturn'] },
          // A machine that saw neither the hand-back nor the close (it was away): the cycle ended without it.
          { guard: 'remoteClosed', target: 'CLOSED', actions: ['stamp', 'applyRemoteTaken'] },
          { guard: and(['remoteTaken', 'remoteMoved']), actions: ['stamp', 'applyRemoteTaken'] },
          // The receiver undid its accept (its checkout failed) and offered the lease again on the chain.
          { guard: and(['remoteReoffered', 'importedCycle']), target: 'NORMAL', actions: ['stamp', 'undoImport'] },
          { guard: 'remoteReoffered', target: 'HANDOFF_READY', actions: ['stamp', 'undoAccept'] },
          { actions: ['stamp', 'replyAlreadyCurrent'] },
        ],
      },
      states: {
        // The holder works; nothing runs and there is nothing to cancel.
        held: {
          on: {
            // `accept --checkout` whose git move failed after the accept was journaled (daemon/takeover/checkout-move.ts):
            // the lease goes back where it was. Allowed while paused: it hands no authority to anyone.
            ACCEPT_UNDONE: [
              { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
              { guard: 'undoesImport', target: '#workspace.NORMAL', actions: ['stamp', 'undoImport'] },
              { target: '#workspace.HANDOFF_READY', actions: ['stamp', 'undoAccept'] },
            ],
          },
        },
        // The return leg's drain runs; it reports here as the out leg's does in EVACUATE.
        returning: {
          entry: 'startDrain',
          on: {
            ...DRAIN_REPORTS,
            // The return leg is fenced by the token of the holder who started it (cycle.receiver.token).
            RETURN_READY: [
              { guard: not('holdsLease'), actions: ['stamp', 'replyStaleToken'] },
              { guard: 'staleDrain', actions: ['stamp', 'replyStaleDrain'] },
              { guard: 'checkpointVerified', target: '#workspace.RETURN_HANDOFF_READY', actions: ['stamp', 'offerReturn'] },
              { actions: ['stamp', 'recordUnverified'] },
            ],
            CANCEL: [
              { guard: 'offerTravels', actions: ['stamp', 'replyOfferTravels'] },
              { target: 'held', actions: ['stamp', 'cancelReturn'] },
            ],
          },
        },
      },
    },
    RETURN_HANDOFF_READY: {
      entry: { type: 'enterStage', params: { stage: 'RETURN_HANDOFF_READY' } },
      on: {
        RETURN_ACCEPTED: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'CLOSED', actions: ['stamp', 'grantAccepted'] },
        ],
        // The holder on a travelling chain withdraws its return (`handoff cancel`): it holds the lease again and
        // may return again or close one-way. Anything else falls through to "nothing to cancel".
        CANCEL: { guard: 'returnWithdrawn', target: 'TAKEOVER', actions: ['stamp', 'cancelReturn'] },
        REMOTE_LEASE: [
          // The primary on another machine took the work back: this holder's part is over.
          { guard: 'remoteClosed', target: 'CLOSED', actions: ['stamp', 'applyRemoteTaken'] },
          // The holder withdrew its return on another machine: the lease is held again, this machine waits.
          { guard: 'remoteTaken', target: 'TAKEOVER', actions: ['stamp', 'followWithdrawnReturn'] },
          { actions: ['stamp', 'replyAlreadyCurrent'] },
        ],
      },
    },
    CLOSED: {
      entry: { type: 'enterStage', params: { stage: 'CLOSED' } },
      on: {
        IMPORT_TAKEOVER: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'TAKEOVER', actions: ['stamp', 'clearCycle', 'importTakeover'] },
        ],
        // A closed cycle stays visible until something starts the next one.
        READING: { target: 'NORMAL', actions: ['stamp', 'clearCycle', 'recordReading'] },
        WARNING: [
          { guard: 'paused', actions: ['stamp', 'recordWarning'] },
          { target: 'EVACUATE', actions: ['stamp', 'recordWarning', 'startWarningCycle'] },
        ],
        PREPARE: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'PREPARE', actions: ['stamp', 'clearCycle', 'replyPrepareEntered'] },
        ],
        NOW: [
          { guard: 'paused', actions: ['stamp', 'replyPaused'] },
          { target: 'EVACUATE', actions: ['stamp', 'startManualCycle'] },
        ],
      },
    },
  },
});
