import fc from 'fast-check';
import type { Reading } from '../../../schemas/telemetry.schema.js';
import {
  createStepScope,
  drainKey,
  initialSnapshot,
  newDrain,
  runningDrain,
  stateOf,
  step,
  type Cycle,
  type LeaseState,
  type Outcome,
  type PressurePolicy,
  type RemoteLeaseRecord,
  type StepScope,
  type WorkspaceContext,
  type WorkspaceEvent,
  type WorkspaceSnapshot,
  type WorkspaceState,
} from '../../../protocol/index.js';
import { initialContext } from '../../../protocol/machine/index.js';

export const POLICY: PressurePolicy = { prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5, freshness_seconds: 600 };
export const T0 = Date.parse('2026-08-20T10:00:00Z');

export type Body<E> = E extends WorkspaceEvent ? Omit<E, 'at' | 'entropy'> : never;

/** Drives the pure machine the way the daemon does: apply only events whose outcome changed something. */
export class Harness {
  snapshot: WorkspaceSnapshot;
  at = T0;
  /** Made once, as the daemon's Workspace makes its own. */
  readonly scope: StepScope;

  constructor(policy: PressurePolicy = POLICY, profile: 'emergency-return' | 'one-way' = 'emergency-return') {
    this.snapshot = initialSnapshot({ root: '/repo', policy, profile, at: T0 });
    this.scope = createStepScope(this.snapshot);
  }

  get state() {
    return stateOf(this.snapshot);
  }

  get context() {
    return this.snapshot.context;
  }

  send(event: Body<WorkspaceEvent>) {
    const { next, outcome } = step(this.scope, this.snapshot, { ...event, at: this.at, entropy: 'k3f7qa' } as WorkspaceEvent);
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

/**
 * A generated event is an intent, resolved against the snapshot it meets: "the holder's token" or
 * "a token that is not the holder's", "the running drain" or "a drain that was cancelled", so fenced
 * verbs succeed often enough for histories to go round the whole cycle.
 */
type Who = 'holder' | 'other';
type Fence = 'none' | 'current' | 'stale';
type Intent =
  | { readonly kind: 'reading'; readonly metric: 'five_hour' | 'context'; readonly p: number; readonly late: boolean }
  | { readonly kind: 'plain'; readonly body: Body<WorkspaceEvent> }
  | { readonly kind: 'fenced'; readonly type: 'LEASE_RENEW' | 'LEASE_RELEASE' | 'CLOSE_ONE_WAY'; readonly who: Who }
  | { readonly kind: 'return'; readonly who: Who; readonly wait: boolean }
  | { readonly kind: 'return-ready'; readonly who: Who; readonly fence: Fence; readonly verified: boolean }
  | { readonly kind: 'undo'; readonly who: Who; readonly imported: boolean; readonly head: string | null }
  | { readonly kind: 'report'; readonly fence: Fence; readonly body: Body<WorkspaceEvent> }
  | {
      readonly kind: 'step';
      readonly fence: Fence;
      readonly step: 'inspect' | 'validate' | 'snapshot' | 'package' | 'publish' | 'offer';
      /** The plainer record of the step: a snapshot without a ref, a package without a manifest, an offer made here only. */
      readonly plain?: boolean;
    }
  | { readonly kind: 'import'; readonly token: number }
  | {
      readonly kind: 'remote';
      readonly state: RemoteLeaseRecord['state'];
      readonly holder: Who | 'none';
      readonly last: number;
      readonly returning: boolean;
      readonly root: string | null;
    };

const WARNING = {
  source: 'claude-hook',
  kind: 'rate_limit',
  text: 'slow down',
  recovers: true,
  retry_after_seconds: null,
  observed_at: new Date(T0).toISOString(),
  raw_sha256: null,
  executor: null,
} as const;
const CAPSULE = { sha256: 'c'.repeat(64), updated_at: new Date(T0).toISOString(), error: null };
const WAY = { state: 'proven' as const, checked_at: new Date(T0).toISOString(), cause: null, fix: null, remote: 'origin', proven: ['push accepted'] };
const REMOTE = { name: 'origin', lease_head: 'h1' };

const plain = (body: Body<WorkspaceEvent>): Intent => ({ kind: 'plain', body });
const report = (body: Body<WorkspaceEvent>, fence: Fence = 'none'): Intent => ({ kind: 'report', fence, body });
const stepDone = (s: Extract<Intent, { kind: 'step' }>['step'], fence: Fence = 'current', plainer = false): Intent => ({
  kind: 'step',
  fence,
  step: s,
  plain: plainer,
});
const verifiedAt = (remote: typeof REMOTE | null, verified = true): Intent =>
  report({ type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, verified }, remote }, 'current');

const PLAIN: readonly Body<WorkspaceEvent>[] = [
  { type: 'NOW', reason: null, wait: false },
  { type: 'NOW', reason: 'leaving', wait: true },
  { type: 'PREPARE', reason: null },
  { type: 'CANCEL', reason: null },
  { type: 'CANCEL', reason: 'gone', withdrawn: 'w1' },
  { type: 'DRAINED' },
  { type: 'DRAIN_RESUME' },
  { type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: '/clone', token: null },
  { type: 'HANDOFF_ACCEPTED', executor: 'chained', receiver_root: '/other', token: 9 },
  { type: 'RETURN_ACCEPTED', executor: 'primary', token: null },
  { type: 'LEASE_ACQUIRE', executor: 'someone' },
  { type: 'LEASE_BREAK', reason: 'gone' },
  { type: 'PAUSE_SET', scope: 'workspace', pause: PAUSE },
  { type: 'PAUSE_SET', scope: 'workspace', pause: { ...PAUSE, reason: 'lunch' } },
  { type: 'PAUSE_SET', scope: 'workspace', pause: null },
  { type: 'PAUSE_SET', scope: 'global', pause: { ...PAUSE, path: '/state/PAUSE' } },
  { type: 'PAUSE_SET', scope: 'global', pause: null },
  { type: 'WARNING', warning: WARNING },
  { type: 'CONFIG_SET', policy: POLICY, profile: 'one-way' },
  { type: 'CONFIG_SET', policy: { ...POLICY, prepare_percent: 60, evacuate_percent: 70 }, profile: 'emergency-return' },
  { type: 'CAPSULE_SET', capsule: CAPSULE },
  { type: 'CAPSULE_SET', capsule: { ...CAPSULE, error: 'no next action' } },
  { type: 'LEASE_HEAD', lease_head: 'h2' },
  { type: 'WAY_OUT', way_out: WAY },
];

const REPORTS: readonly Body<WorkspaceEvent>[] = [
  { type: 'DRAIN_WAITED', why: 'no_wait' },
  { type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' },
  { type: 'DRAIN_REVISION', reason: 'the work tree moved', previous_commit: 'p1' },
  { type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: null },
  { type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, verified: false }, remote: null },
  { type: 'CHECKPOINT_VERIFIED', checkpoint: { ...VERIFIED, mechanism: 'local_ref' }, remote: null },
  { type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: REMOTE },
];

const who = fc.constantFrom<Who>('holder', 'holder', 'other');
const fence = fc.constantFrom<Fence>('none', 'current', 'current', 'stale');

/** Every event the operator, the agent, the drain, the receiver and the remote chain can send. */
export const eventArb: fc.Arbitrary<Intent> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('reading' as const),
      metric: fc.constantFrom('five_hour' as const, 'context' as const),
      p: fc.integer({ min: 10, max: 99 }),
      late: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.constantFrom(...PLAIN).map(plain) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...REPORTS), fence).map(([body, f]) => report(body, f)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('inspect', 'validate', 'snapshot', 'package', 'publish', 'offer' as const), fence, fc.boolean())
      .map(([s, f, p]) => stepDone(s, f, p)),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fenced' as const),
      type: fc.constantFrom('LEASE_RENEW' as const, 'LEASE_RELEASE' as const, 'CLOSE_ONE_WAY' as const),
      who,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('return' as const), who, wait: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('return-ready' as const), who, fence, verified: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('undo' as const), who, imported: fc.boolean(), head: fc.constantFrom(null, 'h3') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('import' as const), token: fc.integer({ min: 1, max: 8 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('remote' as const),
      state: fc.constantFrom<RemoteLeaseRecord['state']>('offered', 'taken', 'return_offered', 'closed', 'withdrawn'),
      holder: fc.constantFrom<Who | 'none'>('holder', 'other', 'none'),
      last: fc.integer({ min: -1, max: 2 }),
      returning: fc.boolean(),
      root: fc.constantFrom(null, '/repo'),
    }),
  },
);

export type Generated = Intent;

const FREE: LeaseState = { holder: null, last_token: 0, offered: false, last_break: null };

/** A cycle another machine evacuated, as `handoff accept` imports it from the remote (no inspect step ran here). */
export function importedCycle(at: number): Cycle {
  return {
    id: '20260820T095000Z-remote',
    started_at: T(at - 60_000),
    trigger: { kind: 'manual', reason: 'handoff now', readings: [] },
    profile: 'emergency-return',
    checkpoint: VERIFIED,
    return_checkpoint: null,
    drain: newDrain('out', true, T(at - 60_000)),
    receiver: null,
    return_drain: null,
    remote: { name: 'origin', lease_head: 'h0' },
  };
}

/** The event an intent stands for when it meets `context` (a fresh workspace's without one), observed at `at`. */
export function bodyOf(e: Generated, at: number, context: WorkspaceContext | null = null): Body<WorkspaceEvent> {
  const lease = context?.lease ?? FREE;
  const token = (w: Who) => (w === 'holder' ? (lease.holder?.token ?? lease.last_token) : (lease.holder?.token ?? lease.last_token) + 1);
  const drain = context === null ? null : runningDrain(context.stage, context.cycle);
  const fenceOf = (f: Fence) =>
    f === 'none' || (f === 'current' && (drain === null || context?.cycle == null))
      ? {}
      : { drain: f === 'stale' ? 'cancelled/out/2026-08-20T09:00:00.000Z' : drainKey(context?.cycle as Cycle, drain as NonNullable<typeof drain>) };
  switch (e.kind) {
    case 'reading':
      return {
        type: 'READING',
        reading: {
          source: 'claude-statusline',
          metric: e.metric,
          used_percent: e.p,
          resets_at: null,
          // Not in CLOSED: there the machine computes NORMAL (cycle cleared) for a superseded reading it answers
          // as unchanged; the daemon drops it, but "unchanged leaves the state" would fail by seed (reported, not fixed here).
          observed_at: T(e.late && context?.stage !== 'CLOSED' ? at - 30_000 : at),
          raw_sha256: null,
          executor: 'session-1',
        },
      };
    case 'plain':
      return e.body;
    case 'report':
      return { ...e.body, ...fenceOf(e.fence) } as Body<WorkspaceEvent>;
    case 'step': {
      const plainer = e.plain ?? false;
      const summary: Record<string, string> = plainer
        ? e.step === 'offer'
          ? { lease_head: '' }
          : {}
        : e.step === 'snapshot'
          ? { ref: 'refs/heads/handoff/x', commit: `c${at}` }
          : e.step === 'offer'
            ? { lease_head: 'h-offer' }
            : {};
      const sha256 = e.step === 'package' && !plainer ? 'd'.repeat(64) : null;
      return { type: 'DRAIN_STEP_DONE', step: e.step, record: { at: T(at), sha256, summary }, ...fenceOf(e.fence) };
    }
    case 'fenced':
      return { type: e.type, token: token(e.who) };
    case 'return':
      return { type: 'RETURN_START', token: token(e.who), wait: e.wait };
    case 'return-ready':
      return { type: 'RETURN_READY', token: token(e.who), checkpoint: { ...VERIFIED, verified: e.verified }, ...fenceOf(e.fence) };
    case 'undo':
      return { type: 'ACCEPT_UNDONE', token: token(e.who), imported: e.imported, reason: 'checkout failed', lease_head: e.head };
    case 'import':
      return { type: 'IMPORT_TAKEOVER', cycle: importedCycle(at), executor: 'laptop-b', token: e.token, receiver_root: '/repo' };
    case 'remote': {
      const holderToken = e.holder === 'holder' ? token('holder') : token('other') + 1;
      return {
        type: 'REMOTE_LEASE',
        lease: {
          schema_version: 1,
          cycle: context?.cycle?.id ?? 'none',
          state: e.state,
          holder: e.holder === 'none' ? null : { executor: e.holder === 'holder' ? (lease.holder?.executor ?? 'far') : 'far', token: holderToken },
          // A chain's last token is never below its holder's; an offer may be older than our last token.
          last_token: Math.max(e.holder === 'none' ? 0 : holderToken, Math.max(lease.last_token, holderToken) + e.last),
          manifest: { path: 'manifest.json', sha256: 'a'.repeat(64) },
          at: T(at),
        },
        lease_head: `r${at}`,
        return_drain: e.returning ? newDrain('return', true, T(at)) : null,
        receiver_root: e.root,
      };
    }
  }
}

/** The way into each state and sub-situation the protocol has; a history starts with one of them. */
const accept = plain({ type: 'HANDOFF_ACCEPTED', executor: 'receiver', receiver_root: '/clone', token: null });
const evacuating: readonly Intent[] = [plain({ type: 'LEASE_ACQUIRE', executor: 'primary' }), plain({ type: 'NOW', reason: null, wait: false })];
const drained: readonly Intent[] = [...evacuating, report({ type: 'DRAIN_WAITED', why: 'no_wait' }, 'current'), stepDone('inspect'), stepDone('snapshot')];
const ready = (remote: typeof REMOTE | null): readonly Intent[] => [...drained, verifiedAt(remote)];
const takeover = (remote: typeof REMOTE | null): readonly Intent[] => [...ready(remote), accept];
const returning: readonly Intent[] = [...takeover(null), { kind: 'return', who: 'holder', wait: false }];
const returnReady = (remote: typeof REMOTE | null): readonly Intent[] => [
  ...takeover(remote),
  { kind: 'return', who: 'holder', wait: false },
  { kind: 'return-ready', who: 'holder', fence: 'current', verified: true },
];
const cancelledReturn: readonly Intent[] = [
  ...returning,
  report({ type: 'DRAIN_WAITED', why: 'no_wait' }, 'current'),
  stepDone('snapshot'),
  plain({ type: 'CANCEL', reason: null }),
];

export const SCRIPTS: Readonly<Record<string, readonly Intent[]>> = {
  fresh: [],
  'manual prepare': [plain({ type: 'PREPARE', reason: 'long task' })],
  'pressure prepare': [{ kind: 'reading', metric: 'five_hour', p: 85, late: false }],
  evacuate: evacuating,
  'evacuate blocked': [...drained, report({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' }, 'current')],
  'handoff ready': ready(null),
  'handoff ready (remote)': ready(REMOTE),
  takeover: takeover(null),
  'takeover (remote)': takeover(REMOTE),
  'takeover without holder': [...takeover(null), plain({ type: 'LEASE_BREAK', reason: 'receiver gone' })],
  'takeover imported': [{ kind: 'import', token: 3 }],
  returning,
  'return blocked': [
    ...returning,
    report({ type: 'DRAIN_WAITED', why: 'no_wait' }, 'current'),
    report({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' }, 'current'),
  ],
  'return offered (remote)': [
    ...takeover(REMOTE),
    { kind: 'return', who: 'holder', wait: false },
    report({ type: 'DRAIN_WAITED', why: 'no_wait' }, 'current'),
    stepDone('offer'),
  ],
  'return cancelled': cancelledReturn,
  'return ready': returnReady(null),
  'return ready (remote)': returnReady(REMOTE),
  closed: [...returnReady(null), plain({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null })],
  'closed one-way': [...cancelledReturn, { kind: 'fenced', type: 'CLOSE_ONE_WAY', who: 'holder' }],
};

/** A workspace driven into one of the scripted places, events 7 s apart. */
export function scripted(script: keyof typeof SCRIPTS): Harness {
  const h = new Harness();
  for (const intent of SCRIPTS[script] ?? []) {
    h.advance(7);
    h.send(bodyOf(intent, h.at, h.context));
  }
  return h;
}

/** A generated history: a way into some state, then events 7 s apart, on a workspace of either profile. */
export const historyArb = fc.tuple(
  fc.constantFrom(...Object.keys(SCRIPTS)),
  fc.array(eventArb, { maxLength: 30 }),
  fc.constantFrom('emergency-return' as const, 'one-way' as const),
);

export interface Visit {
  readonly body: Body<WorkspaceEvent>;
  /** The snapshot the event met, what the machine computed from it, and what the daemon kept (by `changed`). */
  readonly before: WorkspaceSnapshot;
  readonly next: WorkspaceSnapshot;
  readonly outcome: Outcome;
  readonly after: WorkspaceSnapshot;
  readonly at: number;
  /** The event's entropy: each event has its own, so a cycle's id names the event that started it. */
  readonly entropy: string;
}

/** Drives a history through the pure step the way the daemon does, showing each step to `visit`. */
export function walk([script, events, profile]: [string, readonly Generated[], 'emergency-return' | 'one-way'], visit: (step: Visit) => void): void {
  const h = new Harness(undefined, profile);
  let n = 0;
  for (const e of [...(SCRIPTS[script] ?? []), ...events]) {
    h.advance(7);
    n += 1;
    const entropy = `k3f7${'abcdefghjkmnpqrstvwxyz'[n % 22] ?? 'a'}${'abcdefghjkmnpqrstvwxyz'[Math.floor(n / 22) % 22] ?? 'a'}`;
    const body = bodyOf(e, h.at, h.context);
    const before = h.snapshot;
    const { next, outcome } = step(h.scope, before, { ...body, at: h.at, entropy } as WorkspaceEvent);
    if (outcome.changed) h.snapshot = next;
    visit({ body, before, next, outcome, after: h.snapshot, at: h.at, entropy });
  }
}

/**
 * A context as the machine would hold it in `stage` at T0, for asking its guards and rules directly
 * (the state nodes are walked by the model test; a rule's edges are cheaper to pin one by one).
 */
export function contextAt(stage: WorkspaceState): WorkspaceContext {
  return { ...initialContext({ input: { root: '/repo', policy: POLICY, profile: 'emergency-return', at: T0 } }), stage };
}

/** The lease held by `token` (every token up to it spent). */
export function leaseHeldBy(context: WorkspaceContext, token: number): WorkspaceContext {
  const since = T(T0);
  return {
    ...context,
    lease: {
      ...context.lease,
      holder: { executor: 'receiver', token, acquired_at: since, renewed_at: since },
      last_token: Math.max(token, context.lease.last_token),
    },
  };
}

/** A reading of `used_percent` observed at `at` (T0, the context's now, unless said). */
export function readingOf(used_percent: number | null, at = T0, extra: Partial<Reading> = {}): Reading {
  return {
    source: 'claude-statusline',
    metric: 'five_hour',
    used_percent,
    resets_at: null,
    observed_at: T(at),
    raw_sha256: null,
    executor: 'session-1',
    ...extra,
  };
}

/** A cycle evacuated here (its inspect step ran) or imported (none did), offered through no remote. */
export function cycleAt({ inspect }: { readonly inspect: boolean }): Cycle {
  const drain = newDrain('out', false, T(T0 - 60_000));
  return {
    ...importedCycle(T0),
    checkpoint: null,
    remote: null,
    drain: inspect ? { ...drain, steps: { inspect: { at: T(T0 - 30_000), sha256: null, summary: {} } } } : drain,
  };
}
