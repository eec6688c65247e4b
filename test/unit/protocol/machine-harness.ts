import type { Reading } from '../../../schemas/telemetry.schema.js';
import { initialSnapshot, stateOf, step, type PressurePolicy, type WorkspaceEvent, type WorkspaceSnapshot } from '../../../protocol/index.js';

export const POLICY: PressurePolicy = { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 };
export const T0 = Date.parse('2026-08-20T10:00:00Z');

type Body<E> = E extends WorkspaceEvent ? Omit<E, 'at' | 'entropy'> : never;

/** Drives the pure machine the way the daemon does: apply only events whose outcome changed something. */
export class Harness {
  snapshot: WorkspaceSnapshot;
  at = T0;

  constructor(policy: PressurePolicy = POLICY, profile: 'emergency-return' | 'one-way' = 'emergency-return') {
    this.snapshot = initialSnapshot({ root: '/repo', policy, profile, at: T0 });
  }

  get state() {
    return stateOf(this.snapshot);
  }

  get context() {
    return this.snapshot.context;
  }

  send(event: Body<WorkspaceEvent>) {
    const { next, outcome } = step(this.snapshot, { ...event, at: this.at, entropy: 'k3f7qa' } as WorkspaceEvent);
    if (outcome.changed) this.snapshot = next;
    return outcome;
  }

  advance(seconds: number) {
    this.at += seconds * 1000;
  }

  reading(metric: Reading['metric'], used_percent: number | null, extra: Partial<Reading> = {}) {
    const reading: Reading = {
      source: 'claude-statusline',
      metric,
      used_percent,
      resets_at: null,
      observed_at: new Date(this.at).toISOString(),
      raw_sha256: null,
      executor: 'session-1',
      ...extra,
    };
    return this.send({ type: 'READING', reading });
  }
}
