import { describe, expect, it } from 'vitest';
import { statusView, UNKNOWN_WAY_OUT } from '../../../protocol/index.js';
import { Harness, PAUSE, POLICY, T0 } from './machine-harness.js';

const view = (h: Harness) => statusView(h.snapshot, h.at);

describe('statusView: the readings as they stand now, worst credible first', () => {
  it('re-judges each reading at the time asked: its age, whether it counts and why not', () => {
    const h = new Harness();
    h.reading('context', 30);
    h.advance(1);
    h.reading('five_hour', 20);
    h.reading('seven_day', 10);
    h.advance(599.4);
    // The context reading is now 600 s old, past the freshness window: shown last, with why.
    const readings = view(h).readings;
    expect(readings.map((r) => [r.metric, r.credible, r.age_seconds])).toEqual([
      ['five_hour', true, 599],
      ['seven_day', true, 599],
      ['context', false, 600],
    ]);
    expect(readings[0]?.not_credible).toBeNull();
    expect(readings[2]?.not_credible).toEqual(expect.any(String));
    // A reading observed after the moment asked is 0 s old, never negative.
    expect(statusView(h.snapshot, T0).readings.every((r) => r.age_seconds >= 0)).toBe(true);
  });

  it('a per-model limit family is shown under its name but does not count unless configured', () => {
    const h = new Harness();
    h.reading('five_hour', 40);
    h.reading('seven_day', 97, { limit: { id: 'opus', name: 'Opus' } });
    const [first, second] = view(h).readings;
    expect([first?.metric, first?.credible, second?.metric, second?.credible]).toEqual(['five_hour', true, 'seven_day', false]);
    expect(second?.not_credible).toBe('per-model limit family Opus (opus): shown, not counted (pressure.count_limit_families)');
    expect(view(h).pressure).toMatchObject({ percent: 40, metric: 'five_hour', source: 'claude-statusline', before_cancel: false });
    const counted = new Harness({ ...POLICY, count_limit_families: ['opus'] });
    counted.reading('seven_day', 97, { limit: { id: 'opus', name: 'Opus' } });
    expect(view(counted).readings[0]).toMatchObject({ credible: true, not_credible: null });
  });

  it('no pressure without a credible percent', () => {
    const h = new Harness();
    h.reading('five_hour', null);
    expect(view(h).pressure).toBeNull();
  });

  it('a reading read before `handoff cancel` is marked so; a newer one is not', () => {
    const h = new Harness();
    h.reading('five_hour', 91);
    h.advance(1);
    h.send({ type: 'CANCEL', reason: null });
    expect(view(h).pressure?.before_cancel).toBe(true);
    h.advance(1);
    h.reading('five_hour', 85);
    expect(view(h).pressure?.before_cancel).toBe(false);
  });
});

describe("statusView: the kill switch, the way out and the cycle's secret scan", () => {
  it("the workspace's own kill switch is shown before the global one", () => {
    const h = new Harness();
    expect(view(h).paused).toBeNull();
    h.send({ type: 'PAUSE_SET', scope: 'global', pause: { ...PAUSE, reason: 'everywhere' } });
    expect(view(h).paused).toEqual({ ...PAUSE, reason: 'everywhere', scope: 'global' });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause: { ...PAUSE, reason: 'here' } });
    expect(view(h).paused).toEqual({ ...PAUSE, reason: 'here', scope: 'workspace' });
  });

  it('the way out is unknown until a rehearsal; the thresholds are the policy', () => {
    const h = new Harness();
    expect(view(h).way_out).toEqual(UNKNOWN_WAY_OUT);
    expect(view(h).thresholds).toEqual({ prepare_percent: 80, evacuate_percent: 90, hysteresis_percent: 5 });
    expect(view(h)).toMatchObject({ workspace: '/repo', state: 'NORMAL', stage_since: new Date(T0).toISOString(), blocked: null, secrets: null });
  });

  it("the secret scan is read from the current leg's snapshot step, one path per line", () => {
    const h = new Harness();
    h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    expect(view(h).secrets).toBeNull();
    const summary = { withheld_paths: '.env (aws)\nkey.pem (pk)\n', allowed_paths: '', unscanned_paths: 'big.bin (too_large)', allow_list: 'read', other: 3 };
    for (const step of ['inspect', 'validate'] as const)
      h.send({ type: 'DRAIN_STEP_DONE', step, record: { at: new Date(h.at).toISOString(), sha256: null, summary: {} } });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'snapshot', record: { at: new Date(h.at).toISOString(), sha256: null, summary } });
    expect(view(h).secrets).toEqual({ withheld: ['.env (aws)', 'key.pem (pk)'], allowed: [], unscanned: ['big.bin (too_large)'], allow_list: 'read' });
  });

  it('a snapshot summary without the scan fields has empty lists and no allow-list source', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    for (const step of ['inspect', 'validate'] as const)
      h.send({ type: 'DRAIN_STEP_DONE', step, record: { at: new Date(h.at).toISOString(), sha256: null, summary: {} } });
    h.send({
      type: 'DRAIN_STEP_DONE',
      step: 'snapshot',
      record: { at: new Date(h.at).toISOString(), sha256: null, summary: { withheld_paths: 3, allow_list: true } },
    });
    expect(view(h).secrets).toEqual({ withheld: [], allowed: [], unscanned: [], allow_list: null });
  });
});
