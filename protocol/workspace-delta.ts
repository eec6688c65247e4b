import type { Reading } from '../schemas/telemetry.schema.js';
import type { WorkspaceContext, WorkspaceState } from './workspace-machine.js';
import type { PersistedWorkspace } from './workspace-step.js';

/**
 * What one change did to a workspace: the state it led to, the context fields it replaced, and the
 * readings it put or dropped. The journal keeps this, not the whole snapshot, so a record's size
 * follows the change and not the history; snapshots are written whole only on compaction.
 */
export interface WorkspaceDelta {
  readonly state: WorkspaceState;
  /** Top-level context fields the change replaced (readings excepted: see `readings`). */
  readonly set: Partial<WorkspaceContext>;
  readonly readings?: { readonly put: Readonly<Record<string, Reading>>; readonly drop: readonly string[] };
}

/** Fields every event rewrites (its clock, dice and answer): alone they are telemetry, not a move. */
const EVENT_FIELDS: ReadonlySet<string> = new Set(['now', 'entropy', 'outcome']);

/**
 * The machine's assign keeps the reference of every field it does not touch, so an unchanged field
 * is found by identity; readings are compared key by key, since one reading changes one key. Plain
 * loops: it runs for every reading, and `Object.entries` allocated ~2 kB a call (docs/performance/daemon.md).
 */
export function deltaOf(before: PersistedWorkspace, after: PersistedWorkspace): WorkspaceDelta {
  const was = before.context as unknown as Record<string, unknown>;
  const now = after.context as unknown as Record<string, unknown>;
  const set: Record<string, unknown> = {};
  for (const field in now) {
    if (field !== 'readings' && now[field] !== was[field]) set[field] = now[field];
  }
  const put: Record<string, Reading> = {};
  const drop: string[] = [];
  let changedReadings = false;
  for (const key in after.context.readings) {
    const reading = after.context.readings[key];
    if (reading !== undefined && before.context.readings[key] !== reading) {
      put[key] = reading;
      changedReadings = true;
    }
  }
  for (const key in before.context.readings) {
    if (!(key in after.context.readings)) {
      drop.push(key);
      changedReadings = true;
    }
  }
  return { state: after.state, set: set as Partial<WorkspaceContext>, ...(changedReadings ? { readings: { put, drop } } : {}) };
}

export function applyDelta(base: PersistedWorkspace, delta: WorkspaceDelta): PersistedWorkspace {
  let readings = base.context.readings;
  if (delta.readings !== undefined) {
    const dropped = new Set(delta.readings.drop);
    readings = Object.fromEntries(Object.entries({ ...readings, ...delta.readings.put }).filter(([key]) => !dropped.has(key)));
  }
  return { state: delta.state, context: { ...base.context, ...delta.set, readings } };
}

/**
 * A change moves the machine when it changes the state or anything beyond the event's own clock and
 * answer and the readings: a stage, a lease, a cycle, a pause, a capsule, a warning. Only such a
 * change must be durable before it is acknowledged; readings alone are telemetry, written coalesced.
 */
export function movesMachine(delta: WorkspaceDelta, before: WorkspaceState): boolean {
  return delta.state !== before || Object.keys(delta.set).some((field) => !EVENT_FIELDS.has(field));
}
