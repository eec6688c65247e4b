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
 * is found by identity; readings are compared key by key, since one reading changes one key.
 */
export function deltaOf(before: PersistedWorkspace, after: PersistedWorkspace): WorkspaceDelta {
  const set: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(after.context)) {
    if (field !== 'readings' && value !== (before.context as unknown as Record<string, unknown>)[field]) set[field] = value;
  }
  const put: Record<string, Reading> = {};
  for (const [key, reading] of Object.entries(after.context.readings)) {
    if (before.context.readings[key] !== reading) put[key] = reading;
  }
  const drop = Object.keys(before.context.readings).filter((key) => !(key in after.context.readings));
  const changedReadings = Object.keys(put).length > 0 || drop.length > 0;
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
