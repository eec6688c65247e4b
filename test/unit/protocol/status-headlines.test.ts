import { describe, expect, it } from 'vitest';
import { statusView, type StatusView } from '../../../protocol/index.js';
import { describeDrain, drainReport, plainStatus, type DrainReport } from '../../../protocol/status-words.js';
import { Harness, PAUSE, VERIFIED } from './machine-harness.js';

const words = (h: Harness) => plainStatus(statusView(h.snapshot, h.at), h.at);
const record = (h: Harness) => ({ at: new Date(h.at).toISOString(), sha256: null, summary: {} });
const ID = '20260820T100000Z-k3f7qa';

function ready(): Harness {
  const h = new Harness();
  h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
  h.send({ type: 'NOW', reason: null, wait: false });
  h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: VERIFIED, remote: null });
  return h;
}

describe('the headline names the state in one sentence', () => {
  it('NORMAL: no reading yet, below the prepare line', () => {
    const h = new Harness();
    expect(words(h).headline).toBe('Working normally; no credible reading yet.');
    h.reading('context', 79);
    expect(words(h).headline).toBe('Working normally: context at 79 % (claude-statusline), below the 80 % line.');
  });

  it('PREPARE by hand with no reading says when the daemon evacuates', () => {
    const h = new Harness();
    h.send({ type: 'PREPARE', reason: null });
    expect(words(h).headline).toBe('Under pressure: no credible reading yet. Work goes on; the daemon evacuates at 90 %.');
  });

  it('EVACUATE names its reason and, while the drain waits for the agent, for how long', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: 'battery', wait: true });
    h.advance(75);
    expect(words(h).headline).toBe(
      'Evacuating (battery): waiting 1 min 15 s for the agent to finish its atomic step (`handoff drained`) or the drain timeout.',
    );
    // A view without its cycle (nothing to report on) still reads as a sentence.
    expect(plainStatus({ ...statusView(h.snapshot, h.at), cycle: null }, h.at).headline).toBe('Evacuating (by hand): draining.');
  });

  it('HANDOFF_READY, TAKEOVER, the return drain, RETURN_HANDOFF_READY and CLOSED name the cycle', () => {
    const h = ready();
    expect(h.context.cycle?.id).toBe(ID);
    expect(words(h).headline).toBe(`Ready to hand over: cycle ${ID} is recoverable and its lease is on offer.`);
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    const token = h.context.lease.holder?.token ?? 0;
    expect(words(h).headline).toBe(`Taken over by emergency (token ${token}); cycle ${ID}.`);
    h.send({ type: 'RETURN_START', token, wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    expect(words(h).headline).toBe('Handing back: 0 of 6 steps done; now: inspect — look at the repository (running 0 s).');
    h.send({ type: 'RETURN_READY', token, checkpoint: VERIFIED });
    expect(words(h).headline).toBe(`The work came back: cycle ${ID}'s return is recoverable and waits for the primary.`);
    h.send({ type: 'RETURN_ACCEPTED', executor: 'primary', token: null });
    expect(words(h).headline).toBe(`Cycle ${ID} is closed.`);
  });

  it('TAKEOVER with nobody holding the lease names only the cycle', () => {
    const h = ready();
    h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
    const view = statusView(h.snapshot, h.at);
    expect(plainStatus({ ...view, lease: { ...view.lease, holder: null } }, h.at).headline).toBe(`Taken over; cycle ${ID}.`);
  });

  it('with no way on to name, next says there is nothing to do', () => {
    const view: StatusView = { ...statusView(new Harness().snapshot, 0), next: [] };
    expect(plainStatus(view, 0).next).toBe('nothing to do');
  });
});

describe('blocked: where the drain stopped, why, and the one command', () => {
  function blocked(reason: string, leg: 'out' | 'return' = 'out'): Harness {
    const h = leg === 'out' ? new Harness() : ready();
    if (leg === 'out') h.send({ type: 'NOW', reason: null, wait: false });
    else {
      h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
      h.send({ type: 'RETURN_START', token: h.context.lease.holder?.token ?? 0, wait: false });
    }
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    h.send({ type: 'DRAIN_BLOCKED', step: 'inspect', reason });
    return h;
  }

  it('a reason that already says `handoff resume` is not told twice; trailing dots and spaces go', () => {
    expect(words(blocked('stopped: run `handoff resume` later. \n')).blocked).toBe(
      'The evacuation stopped at “look at the repository” (inspect): stopped: run `handoff resume` later. Nothing of yours was changed.',
    );
  });

  it('the return leg says the return stopped', () => {
    expect(words(blocked('disk full', 'return')).blocked).toBe(
      'The return stopped at “look at the repository” (inspect): disk full. Nothing of yours was changed. Fix the cause, then run `handoff resume`.',
    );
  });

  it('a block with no step running says it stopped before it finished', () => {
    const h = new Harness();
    const view = { ...statusView(h.snapshot, h.at), blocked: 'lost' };
    expect(plainStatus(view, h.at).blocked).toBe(
      'The evacuation stopped before it finished: lost. Nothing of yours was changed. Fix the cause, then run `handoff resume`.',
    );
  });

  it('the kill switch of this workspace, without a reason, and the PAUSE file that also lifts it', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: PAUSE });
    expect(words(h).blocked).toBe('The kill switch is on for this workspace: nothing starts or moves until `handoff unpause` or the PAUSE file is removed.');
  });
});

describe('describeDrain: how far the drain is, in one line', () => {
  const report = (over: Partial<DrainReport>): DrainReport => ({
    leg: 'out',
    waiting: false,
    waiting_seconds: 0,
    done: 6,
    total: 6,
    current: null,
    steps: [],
    revision: 1,
    ...over,
  });

  it('a finished drain is the count alone; a later revision says the work tree moved', () => {
    expect(describeDrain(report({}))).toBe('6 of 6 steps done');
    expect(describeDrain(report({ revision: 2 }))).toBe('6 of 6 steps done (revision 2: the work tree moved after a snapshot)');
  });

  it('a stopped step says stopped, and a step with no time shows none', () => {
    const current = { step: 'publish' as const, words: 'push', status: 'blocked' as const, seconds: null };
    expect(describeDrain(report({ done: 4, current, revision: 3 }))).toBe(
      '4 of 6 steps done; now: publish — push (stopped) (revision 3: the work tree moved after a snapshot)',
    );
  });
});

describe('drainReport: each step timed from the end of the one before it', () => {
  it('before the wait ended nothing is current and the wait is timed from the start of the drain', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: true });
    h.advance(30);
    const drain = h.context.cycle?.drain;
    if (!drain) throw new Error('no drain');
    const report = drainReport(drain, false, h.at);
    expect(report).toMatchObject({ leg: 'out', waiting: true, waiting_seconds: 30, done: 0, total: 6, current: null, revision: 1 });
    expect(report.steps.every((s) => s.status === 'pending' && s.seconds === null)).toBe(true);
  });

  it('a step done after the wait took the time since the wait ended; the step after an unreadable time has none', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    h.advance(5);
    h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h) });
    const drain = h.context.cycle?.drain;
    if (!drain) throw new Error('no drain');
    expect(drainReport(drain, false, h.at + 3000).steps.slice(0, 2)).toMatchObject([
      { step: 'inspect', status: 'done', seconds: 5 },
      { step: 'validate', status: 'running', seconds: 3 },
    ]);
    // A clock behind the record never shows a negative time.
    expect(drainReport(drain, false, h.at - 9000).current?.seconds).toBe(0);
    const unreadable = { ...drain, steps: { inspect: { ...record(h), at: 'not a time' } } };
    expect(drainReport(unreadable, false, h.at).steps[1]?.seconds).toBeNull();
  });
});
