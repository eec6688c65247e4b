import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCycleId, runningDrain, stateOf, type DrainProgress, type WorkspaceSnapshot } from '../../../protocol/index.js';
import { historyArb, walk, type Visit } from './machine-harness.js';

/**
 * What an event the machine took writes into the workspace, for every event of the generated
 * histories: the record status, the manifest and the next command read. The model test says where
 * events lead; this one says what they leave behind.
 */
const iso = (ms: number) => new Date(ms).toISOString();
const FIRST_STEPS = ['inspect', 'validate', 'snapshot', 'package', 'publish', 'offer'];
/** The drain the event was about: the running one before it (the leg does not change on a report). */
const legOf = (s: WorkspaceSnapshot): DrainProgress | null =>
  JSON.stringify(s.value) === '{"TAKEOVER":"held"}' ? null : runningDrain(stateOf(s), s.context.cycle);

function checkStamp({ before, next, outcome, at, entropy }: Visit): void {
  if (!outcome.changed) return;
  expect([next.context.now, next.context.entropy]).toEqual([at, entropy]);
  expect(next.context.stage).toBe(stateOf(next));
  if (stateOf(next) !== stateOf(before)) expect(next.context.stage_since).toBe(iso(at));
  else expect(next.context.stage_since).toBe(before.context.stage_since);
  if (stateOf(next) === 'NORMAL') expect([next.context.prepare_since, next.context.prepare_requested_at]).toEqual([null, null]);
  if (stateOf(next) === 'PREPARE') expect(next.context.prepare_since).toBe(stateOf(before) === 'PREPARE' ? before.context.prepare_since : iso(at));
}

function checkCycleStart({ body, before, next, at, entropy }: Visit): void {
  const c = next.context;
  const cycle = c.cycle;
  if (cycle === null) throw new Error('EVACUATE without a cycle');
  expect(cycle).toMatchObject({
    id: formatCycleId(at, entropy),
    started_at: iso(at),
    profile: c.profile,
    checkpoint: null,
    return_checkpoint: null,
    receiver: null,
    return_drain: null,
    remote: null,
  });
  expect(cycle.drain).toMatchObject({ leg: 'out', started_at: iso(at), revision: 1, steps: {}, waited: null });
  expect(c.blocked).toBeNull();
  if (body.type === 'NOW') {
    expect(cycle.trigger).toMatchObject({ kind: 'manual', reason: body.reason ?? 'handoff now' });
    expect(cycle.drain.no_wait).toBe(!body.wait);
  } else if (body.type === 'WARNING') {
    expect(cycle.trigger).toEqual({ kind: 'provider_warning', reason: `${body.warning.kind} from ${body.warning.source}: ${body.warning.text}`, readings: [] });
  } else {
    const line = c.policy.evacuate_percent;
    expect(cycle.trigger.kind).toBe('telemetry');
    expect(cycle.trigger.reason).toMatch(new RegExp(` reached the ${line} % line$`));
    expect(cycle.trigger.reason.startsWith('pressure')).toBe(false);
    expect(cycle.trigger.readings.length).toBeGreaterThan(0);
    for (const r of cycle.trigger.readings) expect(r.used_percent ?? 0).toBeGreaterThanOrEqual(line);
    expect(cycle.drain.no_wait).toBe(false);
  }
  expect(before.context.cycle?.id).not.toBe(cycle.id);
}

function checkDrainReport({ body, before, next, outcome, at }: Visit): void {
  const was = legOf(before);
  const is = runningDrain(stateOf(next), next.context.cycle);
  if (was === null || is === null) throw new Error('a drain report without a running drain');
  // The other leg's drain is not touched by a report about this one.
  if (was.leg === 'return') expect(next.context.cycle?.drain).toEqual(before.context.cycle?.drain);
  else expect(next.context.cycle?.return_drain).toBeNull();
  switch (body.type) {
    case 'DRAIN_BLOCKED':
      expect([next.context.blocked, is.blocked_at, outcome.data]).toEqual([body.reason, iso(at), { blocked: body.reason, step: body.step }]);
      break;
    case 'DRAIN_WAITED':
      expect([is.waited, is.revision_at]).toEqual([{ at: iso(at), why: body.why }, iso(at)]);
      break;
    case 'DRAIN_STEP_DONE':
      expect([is.steps[body.step], next.context.blocked, outcome.data]).toEqual([body.record, null, { step: body.step }]);
      expect(is.manifests).toEqual(body.step === 'package' && body.record.sha256 !== null ? [...was.manifests, body.record.sha256] : was.manifests);
      break;
    case 'DRAIN_REVISION':
      expect([is.revision, is.revision_at, is.previous_commit, outcome.data]).toEqual([
        was.revision + 1,
        iso(at),
        body.previous_commit,
        { reason: body.reason },
      ]);
      expect(is.steps).toEqual(was.steps.validate === undefined ? {} : { validate: was.steps.validate });
      break;
    case 'DRAINED':
      expect(is.drained_at).toBe(was.drained_at ?? iso(at));
      break;
    case 'DRAIN_RESUME':
      expect([next.context.blocked, outcome.data]).toEqual([null, { was_blocked: before.context.blocked }]);
      break;
  }
}

function checkCancel({ body, before, next, outcome, at }: Visit): void {
  if (body.type !== 'CANCEL') return;
  const cycle = before.context.cycle;
  const leg = stateOf(next) === 'TAKEOVER' ? 'return' : 'out';
  const drain = leg === 'return' ? (cycle?.return_drain ?? null) : (cycle?.drain ?? null);
  const step = drain === null || drain.waited === null ? null : (FIRST_STEPS.find((s) => drain.steps[s as 'inspect'] === undefined) ?? null);
  const ref = drain?.steps.snapshot?.summary['ref'];
  expect(outcome.data).toEqual({
    cycle: cycle?.id ?? null,
    leg: cycle === null ? null : leg,
    step,
    blocked: before.context.blocked,
    kept_ref: typeof ref === 'string' ? ref : null,
    reason: body.reason,
    at: iso(at),
    state: stateOf(next),
  });
  expect([next.context.cancelled_at, next.context.blocked, next.context.lease.offered]).toEqual([iso(at), null, false]);
  expect(next.context.lease.holder).toEqual(before.context.lease.holder);
  if (leg === 'out') expect(next.context.cycle).toBeNull();
  else {
    expect([next.context.cycle?.return_drain, next.context.cycle?.abandoned_return]).toEqual([null, drain]);
    const head = body.withdrawn ?? null;
    expect(next.context.cycle?.remote).toEqual(head === null || cycle?.remote == null ? cycle?.remote : { ...cycle.remote, lease_head: head });
  }
}

function checkLease({ body, before, next, outcome, at }: Visit): void {
  const was = before.context.lease;
  const is = next.context.lease;
  const cycle = next.context.cycle;
  const holder = (executor: string, token: number) => ({ executor, token, acquired_at: iso(at), renewed_at: iso(at) });
  switch (body.type) {
    case 'LEASE_ACQUIRE':
      expect([is.holder, is.last_token, outcome.data]).toEqual([holder(body.executor, was.last_token + 1), was.last_token + 1, { token: was.last_token + 1 }]);
      break;
    case 'LEASE_RENEW':
      expect([is.holder, outcome.data]).toEqual([{ ...was.holder, renewed_at: iso(at) }, { token: body.token }]);
      break;
    case 'LEASE_RELEASE':
      expect([is.holder, is.last_token, outcome.data]).toEqual([null, was.last_token, { token: body.token }]);
      break;
    case 'LEASE_BREAK':
      expect(is.last_break).toEqual({ at: iso(at), reason: body.reason, executor: was.holder?.executor ?? null, token: was.holder?.token ?? null });
      expect([is.holder, outcome.data]).toEqual([null, { last_break: is.last_break }]);
      break;
    case 'HANDOFF_ACCEPTED':
    case 'RETURN_ACCEPTED': {
      const token = Math.max(body.token ?? 0, was.last_token + 1);
      expect([is.holder, is.last_token, is.offered, outcome.data]).toEqual([holder(body.executor, token), token, false, { token }]);
      const receiver = body.type === 'HANDOFF_ACCEPTED' ? { executor: body.executor, root: body.receiver_root, token } : before.context.cycle?.receiver;
      expect(cycle?.receiver).toEqual(receiver);
      break;
    }
    case 'IMPORT_TAKEOVER': {
      const token = Math.max(body.token, was.last_token + 1);
      expect(is).toEqual({ holder: holder(body.executor, token), last_token: token, offered: false, last_break: was.last_break });
      expect([cycle, next.context.blocked, outcome.data]).toEqual([
        { ...body.cycle, receiver: { executor: body.executor, root: body.receiver_root, token } },
        null,
        { token },
      ]);
      break;
    }
    case 'ACCEPT_UNDONE': {
      const last = Math.max(was.last_token, body.token);
      expect(is).toEqual({ holder: null, last_token: last, offered: !body.imported, last_break: was.last_break });
      // The state the undo leads to (pressure may move NORMAL on at once).
      expect(outcome.data).toEqual({ undone: body.token, state: body.imported ? 'NORMAL' : 'HANDOFF_READY' });
      const old = before.context.cycle;
      if (body.imported) {
        if (stateOf(next) === 'NORMAL') expect(cycle).toBeNull();
      } else
        expect(cycle).toEqual(
          old === null
            ? null
            : {
                ...old,
                receiver: null,
                remote: old.remote === null ? null : { ...old.remote, lease_head: body.lease_head ?? old.remote.lease_head },
                return_drain: null,
              },
        );
      break;
    }
    default:
      break;
  }
}

function checkRemote({ body, before, next, outcome, at }: Visit): void {
  if (body.type !== 'REMOTE_LEASE' || !outcome.changed) return;
  const was = before.context;
  const old = was.cycle;
  const cycle = next.context.cycle;
  const is = next.context.lease;
  const by = body.lease.holder;
  const remote = old?.remote == null ? null : { ...old.remote, lease_head: body.lease_head };
  const last = Math.max(was.lease.last_token, body.lease.last_token);
  const to = stateOf(next);
  if (body.lease.state === 'return_offered') {
    expect([is, cycle]).toEqual([
      { ...was.lease, offered: true },
      { ...old, return_drain: body.return_drain, remote },
    ]);
  } else if (body.lease.state === 'offered') {
    expect([is.holder, is.last_token, is.offered, is.last_break]).toEqual([null, last, to === 'HANDOFF_READY', was.lease.last_break]);
    expect(outcome.data).toEqual({ undone: was.lease.holder?.token ?? null, state: to === 'HANDOFF_READY' ? to : 'NORMAL' });
    if (to === 'NORMAL') expect(cycle).toBeNull();
    else if (to !== 'HANDOFF_READY') return;
    // An undone accept takes a return leg the holder started with it (no holder, no return).
    else
      expect(cycle).toEqual({
        ...old,
        receiver: null,
        remote: old?.remote == null ? null : { ...old.remote, lease_head: body.lease_head },
        return_drain: null,
      });
  } else if (by !== null) {
    const withdrawn = stateOf(before) === 'RETURN_HANDOFF_READY' && to === 'TAKEOVER';
    const same = withdrawn && was.lease.holder?.token === by.token && old?.receiver?.token === by.token;
    const held = same ? was.lease.holder : { executor: by.executor, token: by.token, acquired_at: iso(at), renewed_at: iso(at) };
    expect([is.holder, is.last_token, is.offered, is.last_break]).toEqual([held, last, false, was.lease.last_break]);
    const receiver = same ? old?.receiver : { executor: by.executor, root: body.receiver_root ?? null, token: by.token };
    expect(cycle?.receiver).toEqual(receiver);
    expect(cycle?.remote).toEqual(remote);
    if (withdrawn) {
      expect([cycle?.return_drain, cycle?.abandoned_return, outcome.data]).toEqual([
        null,
        old?.return_drain,
        { moved_to: by.executor, return_withdrawn: true },
      ]);
    } else {
      expect(outcome.data).toEqual({ moved_to: by.executor });
      expect(cycle?.return_drain).toEqual(old?.return_drain);
    }
  }
}

function checkLegs({ body, before, next, outcome, at }: Visit): void {
  const old = before.context.cycle;
  const cycle = next.context.cycle;
  const c = next.context;
  if (body.type === 'CHECKPOINT_VERIFIED') {
    if (body.checkpoint.verified) {
      expect([c.lease.offered, c.blocked, cycle]).toEqual([true, null, { ...old, checkpoint: body.checkpoint, remote: body.remote }]);
    } else {
      expect(c.blocked).toMatch(/not verified recoverable/);
      expect(outcome).toMatchObject({
        data: { blocked: c.blocked, step: null },
        message: c.blocked,
        hint: expect.stringMatching(/handoff resume.*handoff cancel/),
      });
    }
  }
  if (body.type === 'RETURN_READY') {
    if (body.checkpoint.verified) expect([c.lease.offered, c.blocked, cycle]).toEqual([true, null, { ...old, return_checkpoint: body.checkpoint }]);
    else expect([c.blocked, outcome.data]).toEqual([expect.stringMatching(/not verified/), { blocked: c.blocked, step: null }]);
  }
  if (body.type === 'RETURN_START' && old !== null && cycle !== null) {
    const holder = before.context.lease.holder;
    expect(cycle.receiver).toEqual({ executor: holder?.executor, root: old.receiver?.root ?? null, token: body.token });
    if (old.return_drain !== null && JSON.stringify(before.value) === '{"TAKEOVER":"returning"}') {
      expect([cycle.return_drain, outcome.data]).toEqual([old.return_drain, { refenced: true }]);
      return;
    }
    const abandoned = old.abandoned_return ?? null;
    const commit = abandoned?.steps.snapshot?.summary['commit'];
    expect(cycle.return_drain).toEqual({
      leg: 'return',
      started_at: iso(at),
      no_wait: !body.wait,
      drained_at: null,
      waited: null,
      revision: (abandoned?.revision ?? 0) + 1,
      steps: {},
      manifests: abandoned?.manifests ?? [],
      revision_at: abandoned === null ? null : iso(at),
      previous_commit: abandoned === null ? null : typeof commit === 'string' ? commit : abandoned.previous_commit,
    });
    expect([cycle.abandoned_return, c.blocked, outcome.data]).toEqual([null, null, null]);
  }
}

function checkSettings({ body, before, next, outcome }: Visit): void {
  const c = next.context;
  switch (body.type) {
    case 'PAUSE_SET': {
      const current = before.context.paused[body.scope];
      const keep = current !== null && body.pause !== null && current.path === body.pause.path;
      expect(c.paused[body.scope]).toEqual(keep && body.pause !== null ? { ...body.pause, since: current.since } : body.pause);
      const other = body.scope === 'global' ? 'workspace' : 'global';
      expect(c.paused[other]).toEqual(before.context.paused[other]);
      break;
    }
    case 'CONFIG_SET':
      expect([c.policy, c.profile]).toEqual([body.policy, body.profile]);
      break;
    case 'CAPSULE_SET':
      expect(c.capsule).toEqual(body.capsule);
      break;
    case 'WAY_OUT':
      expect(c.way_out).toEqual(body.way_out);
      break;
    case 'LEASE_HEAD':
      expect(c.cycle?.remote).toEqual({ ...before.context.cycle?.remote, lease_head: body.lease_head });
      break;
    case 'WARNING':
      expect(c.warnings).toEqual([...before.context.warnings, body.warning].slice(-20));
      break;
    case 'READING': {
      const key = `${body.reading.source}/${body.reading.metric}/${body.reading.executor ?? ''}`;
      expect([c.readings[key], outcome.data]).toEqual([body.reading, { key }]);
      break;
    }
    case 'PREPARE':
      expect(c.prepare_requested_at === null || c.prepare_requested_at === iso(next.context.now)).toBe(true);
      break;
    default:
      break;
  }
}

describe('what the machine writes for each event it takes', () => {
  it('every changed answer leaves the record the protocol says', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, (visit) => {
          const { body, before, next, outcome } = visit;
          if (!outcome.changed) return;
          checkStamp(visit);
          const from = stateOf(before);
          const to = stateOf(next);
          if (to === 'EVACUATE' && from !== 'EVACUATE') checkCycleStart(visit);
          if (['DRAIN_BLOCKED', 'DRAIN_WAITED', 'DRAIN_STEP_DONE', 'DRAIN_REVISION', 'DRAINED', 'DRAIN_RESUME'].includes(body.type)) checkDrainReport(visit);
          checkCancel(visit);
          checkLease(visit);
          checkRemote(visit);
          checkLegs(visit);
          checkSettings(visit);
          // A cycle keeps its id until it ends; the states of a cycle always have one.
          if (['EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY'].includes(to)) expect(next.context.cycle).not.toBeNull();
          // An undone import goes back to NORMAL (its answer says so), where readings at the line start a new cycle in the same step.
          const backToNormal = (outcome.data as { state?: string } | null)?.state === 'NORMAL';
          if (
            from !== 'CLOSED' &&
            to !== 'NORMAL' &&
            to !== 'PREPARE' &&
            from !== 'NORMAL' &&
            from !== 'PREPARE' &&
            body.type !== 'IMPORT_TAKEOVER' &&
            !backToNormal
          ) {
            expect(next.context.cycle?.id).toBe(before.context.cycle?.id);
          }
          if (to === 'CLOSED' && from !== 'CLOSED') expect(next.context.cycle).toEqual(expect.objectContaining({ id: before.context.cycle?.id }));
          if (to === 'NORMAL' && from === 'CLOSED') expect(next.context.cycle).toBeNull();
        }),
      ),
      { numRuns: 60 },
    );
  });

  it('refusals name the state and its way on', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, outcome }) => {
          if (!['wrong_state', 'stale_token', 'paused_denied', 'lease_held'].includes(outcome.code)) return;
          expect(outcome.hint ?? '', outcome.code).not.toBe('');
          const stage = before.context.stage;
          if (outcome.code === 'paused_denied') {
            const pause = before.context.paused.workspace ?? before.context.paused.global;
            expect(outcome.message).toBe(`paused by ${pause?.path ?? ''}${pause?.reason ? ` (${pause.reason})` : ''}`);
            expect(outcome.hint).toMatch(/handoff unpause/);
          }
          if (outcome.code === 'stale_token' && !body.type.startsWith('LEASE_')) {
            const holder = before.context.lease.holder;
            expect([outcome.message, outcome.hint]).toEqual([
              'the token is not the current lease token',
              holder === null ? 'nobody holds the lease' : `the lease is held by '${holder.executor}'`,
            ]);
          }
          if (outcome.code === 'wrong_state' && body.type === 'CANCEL')
            expect(outcome.message).toMatch(/^nothing to cancel|(on offer|went out) through the git remote/);
          else if (outcome.code === 'wrong_state' && !('drain' in body) && body.type !== 'LEASE_ACQUIRE' && body.type !== 'CLOSE_ONE_WAY') {
            expect(outcome.message).toBe(`${body.type.toLowerCase()} is not possible in ${stage}`);
          }
          if (outcome.code === 'wrong_state' && body.type !== 'LEASE_ACQUIRE' && !(outcome.message ?? '').startsWith('this report')) {
            const id = before.context.cycle?.id ?? 'CYCLE';
            const hints: Record<string, RegExp> = {
              NORMAL: /`handoff now` starts an evacuation/,
              PREPARE: /refresh the capsule; `handoff now`/,
              EVACUATE: /wait for the drain to finish.*`handoff cancel`/,
              HANDOFF_READY: new RegExp(`a receiver takes over with \`handoff accept.*${id}`),
              TAKEOVER: /hands back with `handoff return`/,
              RETURN_HANDOFF_READY: new RegExp(`takes the work back with \`handoff accept.*${id}`),
              CLOSED: /the cycle is closed; the next reading/,
            };
            // An offer that travels: the return leg's is taken back by the primary, the out leg's withdrawn on the remote first.
            const travels =
              (before.context.cycle?.return_drain ?? null) !== null
                ? new RegExp(`takes it back with \`handoff accept.*${id}`)
                : /withdraws the offer on the remote first/;
            const hint = outcome.message?.includes('through the git remote') ? travels : hints[stage];
            expect(outcome.hint).toMatch(hint ?? /./);
          }
        }),
      ),
      { numRuns: 30 },
    );
  });

  it('says what there is to cancel in each state', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, outcome }) => {
          if (body.type !== 'CANCEL' || outcome.code !== 'wrong_state' || !(outcome.message ?? '').startsWith('nothing')) return;
          const id = before.context.cycle?.id ?? 'CYCLE';
          const words: Record<string, RegExp> = {
            NORMAL: /^nothing to cancel: no stage or drain is under way$/,
            TAKEOVER: /^nothing to cancel: no return leg is under way; the lease holder hands back with `handoff return`$/,
            RETURN_HANDOFF_READY: new RegExp(`^nothing to cancel: the return is ready; the primary takes the work back with \`handoff accept.*${id}`),
            CLOSED: /^nothing to cancel: the cycle is closed$/,
          };
          expect(outcome.message).toMatch(words[before.context.stage] ?? new RegExp(`^nothing to cancel in ${before.context.stage}$`));
        }),
      ),
      { numRuns: 20 },
    );
  });
});

describe('the words of a lease refusal', () => {
  it('an offered lease is taken by the accept that verifies it, named with the cycle', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, outcome }) => {
          if (body.type !== 'LEASE_ACQUIRE' || outcome.changed || outcome.code === 'paused_denied') return;
          if (before.context.lease.offered) expect(outcome.hint).toMatch(new RegExp(`handoff accept.*${before.context.cycle?.id ?? 'CYCLE'}`));
          else expect(outcome.hint).toMatch(/lease break/);
        }),
      ),
      { numRuns: 20 },
    );
  });
});
