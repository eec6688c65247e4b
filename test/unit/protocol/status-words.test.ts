import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../../daemon/cli/output.js';
import { statusView } from '../../../protocol/index.js';
import { drainReport, formatAge, formatDuration, plainStatus } from '../../../protocol/status-words.js';
import { EVERYTHING, UNPRINTABLE } from './hostile-text.js';
import { Harness } from './machine-harness.js';

const record = (at: number) => ({ at: new Date(at).toISOString(), sha256: null, summary: {} });
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

function evacuating() {
  const h = new Harness();
  h.reading('five_hour', 84);
  h.send({ type: 'NOW', reason: 'laptop battery', wait: true });
  return h;
}

describe('the status in plain words', () => {
  it('formats ages and durations the way people say them', () => {
    expect([5, 89, 120, 5399, 7200, 40 * 3600].map(formatAge)).toEqual(['5 s ago', '89 s ago', '2 min ago', '90 min ago', '2 h ago', '2 days ago']);
    expect([0, 59, 60, 125, 599, 1800, 3600, 3660, 5 * 86400].map(formatDuration)).toEqual([
      '0 s',
      '59 s',
      '1 min',
      '2 min 5 s',
      '9 min 59 s',
      '30 min',
      '1 h',
      '1 h 1 min',
      '5 days',
    ]);
  });

  it('PREPARE: names the pressure and asks for the capsule', () => {
    const h = new Harness();
    h.reading('five_hour', 84);
    const words = plainStatus(statusView(h.snapshot, h.at), h.at);
    expect(words.headline).toBe('Under pressure: five_hour at 84 % (claude-statusline). Work goes on; the daemon evacuates at 90 %.');
    expect(words.next).toMatch(/handoff capsule set/);
    expect(words.blocked).toBeNull();
    expect(words.drain).toBeNull();
  });

  it('EVACUATE: the wait, then which step runs and for how long', () => {
    const h = evacuating();
    h.advance(12);
    let words = plainStatus(statusView(h.snapshot, h.at), h.at);
    expect(words.drain).toMatchObject({ waiting: true, waiting_seconds: 12, done: 0 });
    expect(words.next).toMatch(/handoff drained/);
    h.send({ type: 'DRAIN_WAITED', why: 'drained' });
    h.advance(2);
    h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h.at) });
    h.advance(3);
    h.send({ type: 'DRAIN_STEP_DONE', step: 'validate', record: record(h.at) });
    h.advance(4);
    words = plainStatus(statusView(h.snapshot, h.at), h.at);
    expect(words.drain?.current).toEqual({ step: 'snapshot', words: 'snapshot the work tree onto a commit', status: 'running', seconds: 4 });
    expect(words.drain?.steps.map((s) => [s.step, s.status, s.seconds])).toEqual([
      ['inspect', 'done', 2],
      ['validate', 'done', 3],
      ['snapshot', 'running', 4],
      ['package', 'pending', null],
      ['publish', 'pending', null],
      ['offer', 'pending', null],
    ]);
    expect(words.headline).toMatch(/2 of 6 steps done; now: snapshot — snapshot the work tree onto a commit \(running 4 s\)/);
  });

  it('a blocked drain says where, why, that nothing was changed, and what to run', () => {
    const h = evacuating();
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h.at) });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'validate', record: record(h.at) });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'snapshot', record: record(h.at) });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'package', record: record(h.at) });
    h.advance(7);
    h.send({ type: 'DRAIN_BLOCKED', step: 'publish', reason: 'git push was rejected by origin.' });
    // Ten minutes on, the stopped step still says it ran 7 s before it stopped.
    h.advance(600);
    const words = plainStatus(statusView(h.snapshot, h.at), h.at);
    expect(words.blocked).toBe(
      'The evacuation stopped at “push the handoff branch, the package and the lease offer at once, and check the remote has them” (publish): git push was rejected by origin. Nothing of yours was changed. Fix the cause, then run `handoff resume`.',
    );
    expect(words.next).toMatch(/handoff resume/);
    const drain = h.context.cycle?.drain;
    expect(drain && drainReport(drain, true, h.at).current).toMatchObject({ step: 'publish', status: 'blocked', seconds: 7 });
  });

  it('the kill switch is explained, with the command that lifts it', () => {
    const h = new Harness();
    h.send({ type: 'PAUSE_SET', scope: 'global', pause: { reason: 'travelling', since: new Date(h.at).toISOString(), path: '/s/PAUSE' } });
    const words = plainStatus(statusView(h.snapshot, h.at), h.at);
    expect(words.blocked).toMatch(/kill switch is on for every workspace \(“travelling”\).*handoff unpause` --global/);
    expect(words.next).toBe('run `handoff unpause --global` when it is safe to go on');
  });
});

describe('handoff status for people', () => {
  it('one screen: the worst reading first with its age, the drain step, the next thing to do; colour only when asked', () => {
    const h = new Harness();
    h.reading('context', 41);
    h.advance(150);
    h.reading('five_hour', 86, { resets_at: Math.floor(h.at / 1000) + 3600 });
    h.send({ type: 'NOW', reason: 'battery', wait: false });
    h.send({ type: 'DRAIN_WAITED', why: 'no_wait' });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h.at) });
    h.advance(7);
    const view = statusView(h.snapshot, h.at);
    const text = renderStatus(view, { color: false, nowMs: h.at, columns: 200 });
    expect(text).not.toMatch(ANSI);
    const lines = text.split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    const readings = lines.filter((l) => /^ {2}(five_hour|context) /.test(l));
    expect(readings[0]).toMatch(/^ {2}five_hour +86 % .*claude-statusline \(session-1\) {2}7 s ago {2}resets in 59 min/);
    expect(readings[1]).toMatch(/context +41 % .* 3 min ago/);
    expect(text).toMatch(/^state +EVACUATE since 7 s ago$/m);
    expect(text).toMatch(/^drain +1 of 6 steps done; now validate: run the quick validation \(running 7 s\)$/m);
    expect(text).toMatch(/✓ inspect 0 s {2}▸ validate 7 s {2}· snapshot/);
    expect(text).toMatch(/^next +wait: the daemon is checkpointing/m);
    expect(renderStatus(view, { color: true, nowMs: h.at })).toMatch(ANSI);
    // At 80 columns (a pipe's width) no line is longer; a folded line goes on under its column.
    const narrow = renderStatus(view, { color: false, nowMs: h.at, columns: 80 }).split('\n');
    expect(Math.max(...narrow.map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow.filter((l) => /^ {4}in 59 min|^ {4}resets in 59 min/.test(l))).toHaveLength(1);
  });

  it('a hostile reason, path or blocked text is shown escaped, on its own line, bounded; only our colours are ESC', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: `${EVERYTHING}${'x'.repeat(2000)}`, wait: true });
    const raw = statusView(h.snapshot, h.at);
    const view = { ...raw, workspace: `/w/${EVERYTHING}`, blocked: `git: remote: \x1b]0;owned\x07 report\u202etxt.exe\n${EVERYTHING}` };
    const plain = renderStatus(view, { color: false, nowMs: h.at });
    expect(plain).not.toMatch(UNPRINTABLE);
    expect(plain).toContain('\\x1b]0;owned\\x07');
    expect(plain).toContain('\\u{202e}');
    const lines = plain.split('\n');
    expect(lines.filter((l) => /^state /.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /^(#|Authority)/.test(l))).toEqual([]);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(800);
    // With colour, the only escapes are the daemon's own SGR sequences.
    const coloured = renderStatus(view, { color: true, nowMs: h.at });
    expect(coloured.replace(new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g'), '')).not.toMatch(UNPRINTABLE);
  });

  it('many readings: the worst eight, then a pointer to --json', () => {
    const h = new Harness();
    const metrics = ['context', 'five_hour', 'seven_day', 'weekly', 'monthly', 'requests', 'tokens'] as const;
    for (const [i, metric] of metrics.entries()) {
      h.reading(metric, 10 + i);
      h.reading(metric, 20 + i, { executor: 'session-2' });
    }
    const text = renderStatus(statusView(h.snapshot, h.at), { color: false, nowMs: h.at });
    expect(text.split('\n').filter((l) => /^ {2}[a-z_]+ +\d+ % /.test(l))).toHaveLength(8);
    expect(text).toMatch(/… 6 more: `handoff status --json`/);
    expect(text).toMatch(/^ {2}tokens +26 %/m);
  });
});
