import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Suites write their figures here; the reporter prints them when the run ends.
const figures = process.env['HANDOFF_FAULT_FIGURES'] ?? mkdtempSync(join(tmpdir(), 'handoff-fault-figures-'));
process.env['HANDOFF_FAULT_FIGURES'] = figures;

export default defineConfig({
  test: {
    include: ['test/fault/**/*.fault.ts'],
    // Real daemons, git and kill -9 on 2 cores: one suite per core.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 600_000,
    hookTimeout: 120_000,
    // No suite may leave a daemon behind by accident: auto-start (auto-start.ts) is off here.
    env: { HANDOFF_FAULT_FIGURES: figures, HANDOFF_NO_AUTO_START: '1' },
    reporters: ['default', './test/fault/figures-reporter.ts'],
  },
});
