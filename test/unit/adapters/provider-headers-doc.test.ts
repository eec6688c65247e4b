import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ADAPTERS } from '../../../adapters/telemetry/index.js';
import type { Source } from '../../../schemas/telemetry.schema.js';
import { CTX, expectSchemaValid } from './fixture-helpers.js';

const DOC = readFileSync(new URL('../../../docs/agents/provider-headers.md', import.meta.url), 'utf8');

/** `<!-- example: ADAPTER → EXPECTATION -->` and the ```http block right after it. */
const EXAMPLES = [...DOC.matchAll(/<!-- example: (\S+) → (.+?) -->\n```http\n([\s\S]*?)```/g)].map(([, adapter = '', expect = '', block = '']) => ({
  adapter,
  expect,
  block,
}));

const RECOVERY: Readonly<Record<string, boolean | null>> = { recovers: true, 'does not recover': false, 'recovery not said': null };

/** The expectation in words → the warnings and readings it names, e.g. "warning spend_cap, does not recover; five_hour 102 %". */
function expected(words: string): { warnings: [string, boolean | null][]; readings: [string, number][] } {
  const warnings: [string, boolean | null][] = [];
  const readings: [string, number][] = [];
  for (const part of words.split(';').map((p) => p.trim())) {
    const warning = /^warning (\w+), (.+)$/.exec(part);
    const reading = /^(\w+) ([\d.]+) %$/.exec(part);
    if (warning !== null) warnings.push([warning[1] ?? '', RECOVERY[warning[2] ?? ''] ?? null]);
    else if (reading !== null) readings.push([reading[1] ?? '', Number(reading[2])]);
    else if (part !== 'no warning') throw new Error(`unreadable expectation in the doc: ${part}`);
  }
  return { warnings, readings };
}

describe('docs/agents/provider-headers.md examples', () => {
  it('has examples for both providers, after headers and alone', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(6);
    expect(new Set(EXAMPLES.map((e) => e.adapter))).toEqual(new Set(['openai-headers', 'anthropic-headers']));
  });

  it.each(EXAMPLES)('$adapter → $expect', ({ adapter, expect: words, block }) => {
    const result = ADAPTERS[adapter as Source](block, CTX);
    const want = expected(words);
    expect(result.warnings.map((w) => [w.kind, w.recovers])).toEqual(want.warnings);
    expect(result.readings.map((r) => [r.metric, r.used_percent])).toEqual(want.readings);
    expectSchemaValid(result);
  });
});
