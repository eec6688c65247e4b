import fc from 'fast-check';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import { initialSnapshot, stateOf, step, type Outcome, type PressurePolicy, type WorkspaceEvent, type WorkspaceSnapshot } from '../../../protocol/index.js';

export const POLICY: PressurePolicy = { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 };
export const T0 = Date.parse('2026-08-20T10:00:00Z');

export type Body<E> = E extends WorkspaceEvent ? Omit<E, 'at' | 'entropy'> : never;

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

export const VERIFIED = { mechanism: 'handoff_branch' as const, ref: 'refs/heads/handoff/x', commit: 'abc', verified: true };
export const PAUSE = { reason: null, since: new Date(T0).toISOString(), path: '/repo/.session-handoff/PAUSE' };

const T = (at: number) => new Date(at).toISOString();
const record = (at: number) => ({ at: T(at), sha256: null, summary: {} });

/** Every event the operator, the agent, the drain and the receiver can send, with tokens near the real ones. */
export const eventArb = fc.oneof(
  fc.integer({ min: 10, max: 99 }).map((p) => ({ kind: 'reading' as const, p })),
  fc.constantFrom(
    { type: 'NOW', reason: null, wait: false },
    { type: 'NOW', reason: null, wait: true },
    { type: 'PREPARE', reason: null },
    { type: 'CANCEL', reason: null },
    { type: 'DRAINED' },
    { type: 'DRAIN_RESUME' },
    { type: 'DRAIN_WAITED', why: 'no_wait' },
    { type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' },
    { type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: null },
    { type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, verified: false }, remote: null },
    { type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: '/clone', token: null },
    { type: 'RETURN_ACCEPTED', executor: 'primary', token: null },
    { type: 'LEASE_ACQUIRE', executor: 'someone' },
    { type: 'LEASE_BREAK', reason: 'gone' },
    { type: 'PAUSE_SET', scope: 'workspace', pause: PAUSE },
    { type: 'PAUSE_SET', scope: 'workspace', pause: null },
    { type: 'PAUSE_SET', scope: 'global', pause: PAUSE },
    { type: 'PAUSE_SET', scope: 'global', pause: null },
    { type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, mechanism: 'local_ref' }, remote: null },
    { type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: { name: 'origin', lease_head: 'abc' } },
  ),
  fc.record({
    type: fc.constantFrom('RETURN_START', 'RETURN_READY', 'CLOSE_ONE_WAY', 'LEASE_RELEASE', 'LEASE_RENEW', 'ACCEPT_UNDONE'),
    token: fc.integer({ min: 1, max: 6 }),
  }),
  fc.constantFrom(...(['inspect', 'validate', 'snapshot', 'publish', 'package', 'offer'] as const)).map((step) => ({ kind: 'step' as const, step })),
);

type Generated = typeof eventArb extends fc.Arbitrary<infer G> ? G : never;

/** The event a generated one stands for, observed at `at`. */
export function bodyOf(e: Generated, at: number): Body<WorkspaceEvent> {
  if ('kind' in e) {
    const body =
      e.kind === 'reading'
        ? {
            type: 'READING',
            reading: {
              source: 'claude-statusline',
              metric: 'five_hour',
              used_percent: e.p,
              resets_at: null,
              observed_at: T(at),
              raw_sha256: null,
              executor: 'session-1',
            },
          }
        : { type: 'DRAIN_STEP_DONE', step: e.step, record: record(at) };
    return body as Body<WorkspaceEvent>;
  }
  const extra = {
    RETURN_START: { wait: false },
    RETURN_READY: { checkpoint: VERIFIED },
    ACCEPT_UNDONE: { imported: false, reason: 'checkout failed', lease_head: null },
  };
  return { ...e, ...(extra[e.type as keyof typeof extra] ?? {}) } as Body<WorkspaceEvent>;
}

/** A generated history: events 7 s apart, on a workspace of either profile. */
export const historyArb = fc.tuple(fc.array(eventArb, { maxLength: 40 }), fc.constantFrom('emergency-return' as const, 'one-way' as const));

export interface Visit {
  readonly body: Body<WorkspaceEvent>;
  /** The snapshot the event met, what the machine computed from it, and what the daemon kept (by `changed`). */
  readonly before: WorkspaceSnapshot;
  readonly next: WorkspaceSnapshot;
  readonly outcome: Outcome;
  readonly after: WorkspaceSnapshot;
  readonly at: number;
}

/** Drives a history through the pure step the way the daemon does, showing each step to `visit`. */
export function walk([events, profile]: [readonly Generated[], 'emergency-return' | 'one-way'], visit: (step: Visit) => void): void {
  const h = new Harness(undefined, profile);
  for (const e of events) {
    h.advance(7);
    const body = bodyOf(e, h.at);
    const before = h.snapshot;
    const { next, outcome } = step(before, { ...body, at: h.at, entropy: 'k3f7qa' } as WorkspaceEvent);
    if (outcome.changed) h.snapshot = next;
    visit({ body, before, next, outcome, after: h.snapshot, at: h.at });
  }
}
