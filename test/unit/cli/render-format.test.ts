import { describe, expect, it } from 'vitest';
import { CommanderError } from 'commander';
import { cycleTime, relativeTime, table, wrap } from '../../../daemon/cli/render/format.js';
import { liveLine, newLines, nothingSaid } from '../../../daemon/cli/render/drain-progress.js';
import { usageFailure } from '../../../daemon/cli/usage-failure.js';
import { statusView } from '../../../protocol/index.js';
import { Harness } from '../protocol/machine-harness.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const record = (at: number, summary: Record<string, string | number | boolean | null> = {}) => ({ at: new Date(at).toISOString(), sha256: null, summary });

describe('the shared helpers of the human output', () => {
  it('times are relative, both ways; a cycle id names its own start', () => {
    expect(relativeTime('2026-12-02T11:57:00Z', NOW)).toBe('3 min ago');
    expect(relativeTime('2026-12-02T14:00:00Z', NOW)).toBe('in 2 h');
    expect(relativeTime('2026-12-02T12:00:01Z', NOW)).toBe('0 s ago');
    expect(cycleTime('20261202T115000Z-k3f9qa')).toBe('2026-12-02T11:50:00Z');
    expect(cycleTime('nope')).toBeNull();
  });

  it('tables pad every column but the last; lines fold at words under their column', () => {
    expect(table(['A', 'BB'], [['xxx', 'y']])).toEqual(['A    BB', 'xxx  y']);
    expect(wrap('next      one two three four', 20, 10)).toEqual(['next      one two', '          three four']);
    expect(wrap('short', 20, 10)).toEqual(['short']);
    // A path longer than the line stays whole, to be copied.
    expect(wrap(`read ${'/p'.repeat(20)}`, 20, 5)).toEqual(['read', `     ${'/p'.repeat(20)}`]);
  });
});

describe('following a drain', () => {
  it('says why the wait ended, each finished step with its time, names a skipped one, never a step past the last', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: true });
    const said = nothingSaid();
    expect(newLines(statusView(h.snapshot, h.at), said)).toEqual(['evacuating /repo: cycle 20260820T100000Z-k3f7qa, 6 steps']);
    h.advance(23);
    expect(liveLine(statusView(h.snapshot, h.at), null, h.at)).toMatch(/waiting for the agent .* \(23 s so far; the drain timeout ends the wait\)/);
    h.send({ type: 'DRAIN_WAITED', why: 'no_agent' });
    h.advance(1);
    h.send({ type: 'DRAIN_STEP_DONE', step: 'inspect', record: record(h.at, { dirty: 20000, branch: 'main' }) });
    h.send({ type: 'DRAIN_STEP_DONE', step: 'validate', record: record(h.at, { status: 'not_run' }) });
    h.advance(4);
    const view = statusView(h.snapshot, h.at);
    expect(newLines(view, said)).toEqual([
      '  no agent session was seen working here, so there is no `handoff drained` to wait for',
      '  ✓ inspect     1.0 s  20,000 changed files on main',
      '  - validate  skipped  no validation command is configured (`validation.command` in config.json)',
    ]);
    const scanning = {
      step: 'snapshot' as const,
      started_at: new Date(h.at - 4000).toISOString(),
      phase: 'secret scan' as const,
      done: 4210,
      total: 20000,
      unit: 'files' as const,
    };
    expect(liveLine(view, scanning, h.at)).toBe('  ▸ snapshot    4.0 s  scanning for secrets: 4,210 of 20,000 files');
    expect(newLines(view, said)).toEqual([]);
    for (const step of ['snapshot', 'package', 'publish', 'offer'] as const) h.send({ type: 'DRAIN_STEP_DONE', step, record: record(h.at) });
    expect(liveLine(statusView(h.snapshot, h.at), null, h.at)).toBeNull();
  });
});

describe('command-line mistakes', () => {
  it('a typo gets its suggestion as the hint, not the help', () => {
    const typo = usageFailure(new CommanderError(1, 'commander.unknownCommand', "error: unknown command 'stauts'\n(Did you mean status?)"), 'handoff');
    expect(typo.error).toEqual({ message: "unknown command 'stauts'", hint: 'did you mean `handoff status`? `handoff --help` lists what it takes' });
    const missing = usageFailure(
      new CommanderError(1, 'commander.missingMandatoryOptionValue', "error: required option '--as <executor>' not specified"),
      'handoff accept',
    );
    expect(missing.code).toBe('usage_error');
    expect(missing.error?.hint).toBe('`handoff accept --help` says what it takes');
  });
});

describe('a mistyped subcommand', () => {
  it('under a default subcommand (`lease aquire` → `lease show` with an argument too many) is named as the typo it is', () => {
    const excess = new CommanderError(1, 'commander.excessArguments', "error: too many arguments for 'show'. Expected 0 arguments but got 1.");
    const names = ['show', 'acquire', 'renew', 'release', 'break'];
    expect(usageFailure(excess, 'handoff lease', { word: 'aquire', names }).error).toEqual({
      message: "unknown command 'aquire' for `handoff lease`",
      hint: 'did you mean `handoff lease acquire`? `handoff lease --help` lists what it takes',
    });
    expect(usageFailure(excess, 'handoff lease', { word: 'zzz', names }).error?.hint).toBe('`handoff lease` takes show, acquire, renew, release, break');
  });
});
