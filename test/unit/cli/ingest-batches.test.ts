import { describe, expect, it } from 'vitest';
import type { IngestReport } from '../../../protocol/index.js';
import { parseGeminiTelemetry } from '../../../adapters/telemetry/index.js';
import { batchLines, batchRecords, mergeReports } from '../../../daemon/cli/ingest-batches.js';

describe('batchLines', () => {
  it('keeps whole lines together within the budget, in order', () => {
    const text = 'aaaa\nbbbb\ncccc\ndddd\n';
    // 'aaaa\n' is six bytes once escaped: two lines fill a budget of 12.
    expect(batchLines(text, 12)).toEqual({ batches: ['aaaa\nbbbb\n', 'cccc\ndddd\n'], oversized: [], firstLines: [1, 3] });
    expect(batchLines(text, 1000).batches).toEqual([text]);
  });

  it('counts the escaped size: quotes and backslashes grow inside JSON', () => {
    // Each line is 4 characters but 7 once escaped ("\\"\\"" plus the newline's \\n).
    expect(batchLines('""\\\n""\\\n', 8).batches).toEqual(['""\\\n', '""\\\n']);
  });

  it('leaves out and names a line that alone exceeds the budget', () => {
    expect(batchLines(`ok\n${'x'.repeat(50)}\nfine\n`, 20)).toEqual({ batches: ['ok\nfine\n'], oversized: [2], firstLines: [1] });
  });
});

describe('batchRecords', () => {
  /** A record as Gemini CLI's file exporter writes it: pretty-printed over many lines. */
  const record = (name: string, pad = 0) => JSON.stringify({ attributes: { 'event.name': name, pad: 'p'.repeat(pad) } }, null, 2);
  const linesOf = (text: string) => text.split('\n').length - 1;

  it('keeps whole multi-line records together within the budget; every byte of the file is in one batch, at its own line', () => {
    const text = [record('a'), record('b'), 'stray line', record('c'), record('d')].join('\n') + '\n';
    const { batches, oversized, firstLines } = batchRecords(text, 200);
    expect(oversized).toEqual([]);
    expect(batches.join('')).toBe(text);
    expect(batches.length).toBeGreaterThan(1);
    for (const [index, batch] of batches.entries()) {
      expect(JSON.stringify(batch).length - 2).toBeLessThanOrEqual(200);
      // Each batch begins where the file's line firstLines[index] begins.
      expect(linesOf(text.slice(0, text.indexOf(batch)))).toBe((firstLines[index] ?? 0) - 1);
      expect(() => parseGeminiTelemetry(batch, { observedAt: new Date(0) })).not.toThrow();
    }
  });

  it('leaves out and names a record that alone exceeds the budget; a record still being written stays out', () => {
    const text = `${record('a')}\n${record('huge', 500)}\n${record('b')}\n{"attributes": {"event.name": "gemini_cli.api_`;
    const { batches, oversized, firstLines } = batchRecords(text, 200);
    expect(oversized).toEqual([linesOf(record('a')) + 2]);
    expect(batches).toEqual([`${record('a')}\n`, `\n${record('b')}\n{"attributes": {"event.name": "gemini_cli.api_`]);
    expect(firstLines).toEqual([1, linesOf(`${record('a')}\n${record('huge', 500)}`) + 1]);
  });
});

describe('mergeReports', () => {
  const base = (over: Partial<IngestReport>): IngestReport => ({
    workspace: '/r',
    state: 'NORMAL',
    cycle: null,
    adapter: 'codex-rollout',
    route: { by: 'payload', cwd: '/r', session_id: 's' },
    recorded: [],
    unchanged: [],
    not_credible: [],
    unknown: [],
    warnings: [],
    events: [],
    skipped_lines: [],
    ...over,
  });
  const r = (metric: 'five_hour' | 'weekly', used: number) => ({
    source: 'codex-rollout' as const,
    metric,
    used_percent: used,
    resets_at: null,
    observed_at: '2026-11-29T10:00:00.000Z',
    raw_sha256: null,
    executor: 's',
  });

  it('concatenates records, takes the last state and the first route, and drops metrics that became known', () => {
    const merged = mergeReports(
      [
        base({
          recorded: [r('five_hour', 40)],
          unknown: [
            { metric: 'weekly', reason: 'absent' },
            { metric: 'context', reason: 'a' },
          ],
        }),
        base({
          state: 'EVACUATE',
          route: { by: 'repo', cwd: null, session_id: 's' },
          recorded: [r('weekly', 93)],
          unknown: [{ metric: 'context', reason: 'b' }],
        }),
      ],
      [7],
    );
    expect(merged).toMatchObject({ state: 'EVACUATE', route: { by: 'payload', cwd: '/r' }, chunks: 2, oversized_lines: [7] });
    expect(merged.recorded.map((x) => x.metric)).toEqual(['five_hour', 'weekly']);
    expect(merged.unknown).toEqual([{ metric: 'context', reason: 'b' }]);
  });

  it('numbers skipped lines from the start of the file, not of their chunk', () => {
    const merged = mergeReports([base({ skipped_lines: [{ line: 2, reason: 'x' }] }), base({ skipped_lines: [{ line: 1, reason: 'y' }] })], [], [1, 40]);
    expect(merged.skipped_lines).toEqual([
      { line: 2, reason: 'x' },
      { line: 40, reason: 'y' },
    ]);
  });
});
