import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { ADAPTERS, adapterFor, parseClaudeStatusline, parseCodexRollout } from '../../../adapters/telemetry/index.js';
import { SOURCES } from '../../../schemas/telemetry.schema.js';
import { listFixtureFiles } from './fixture-helpers.js';

describe('ADAPTERS registry', () => {
  it('has exactly one adapter per schema source', () => {
    expect(Object.keys(ADAPTERS).sort()).toEqual([...SOURCES].sort());
    expect(ADAPTERS['claude-statusline']).toBe(parseClaudeStatusline);
    expect(ADAPTERS['codex-rollout']).toBe(parseCodexRollout);
  });

  it('looks up by name without reaching prototype keys', () => {
    expect(adapterFor('codex-rollout')).toBe(parseCodexRollout);
    expect(adapterFor('constructor')).toBeUndefined();
    expect(adapterFor('__proto__')).toBeUndefined();
  });

  it('is frozen', () => {
    expect(Object.isFrozen(ADAPTERS)).toBe(true);
  });
});

describe('fixture coverage', () => {
  it('every shared telemetry fixture file is named by an adapter test', () => {
    const dir = new URL('./', import.meta.url);
    const testSources = readdirSync(dir)
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => readFileSync(new URL(name, dir), 'utf8'))
      .join('\n');
    const files = listFixtureFiles();
    expect(files.length).toBeGreaterThan(20);
    expect(files.filter((file) => !testSources.includes(`'${file}'`) && !testSources.includes(`\`${file}\``))).toEqual([]);
  });
});
