import { renderCycle, renderCycles } from './cycles.js';
import { renderDrainResult } from './drain-result.js';
import type { Renderer } from './format.js';
import { renderPruned } from './prune.js';
import { renderAcquired, renderBroken, renderLease, renderReleased, renderRenewed } from './lease.js';
import {
  renderCancelled,
  renderCapsuleSaved,
  renderCapsuleShown,
  renderCheck,
  renderClosed,
  renderDaemonStopped,
  renderDrained,
  renderPaused,
  renderPrepared,
  renderSignal,
  renderUnpaused,
} from './stages.js';
import { renderAccepted, renderVerified } from './takeover.js';

export { processView, relativeTime, table, wrap, wrapAll, type Renderer, type View } from './format.js';
export type { LeaseShown } from './lease.js';

/**
 * The human answer of each verb that talks to the daemon, by its command line. A verb whose module
 * renders its own answer (install, service, ingest, journal, open, capsule template) passes it
 * directly; no verb prints a bare code (test/unit/cli/render-verbs.test.ts runs each one).
 */
export const RENDERERS = {
  prepare: renderPrepared,
  now: renderDrainResult,
  drained: renderDrained,
  cancel: renderCancelled,
  check: renderCheck,
  resume: renderDrainResult,
  return: renderDrainResult,
  close: renderClosed,
  verify: renderVerified,
  accept: renderAccepted,
  list: renderCycles,
  show: renderCycle,
  'lease show': renderLease,
  'lease acquire': renderAcquired,
  'lease renew': renderRenewed,
  'lease release': renderReleased,
  'lease break': renderBroken,
  pause: renderPaused,
  unpause: renderUnpaused,
  signal: renderSignal,
  'daemon stop': renderDaemonStopped,
  'capsule set': renderCapsuleSaved,
  'capsule show': renderCapsuleShown,
  prune: renderPruned,
} as const satisfies Readonly<Record<string, Renderer<never>>>;
