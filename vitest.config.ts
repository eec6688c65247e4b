import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Fault suites write their figures here (support/figures.ts creates it); the reporter prints them when the run ends.
const figures = process.env['HANDOFF_FAULT_FIGURES'] ?? join(tmpdir(), `handoff-fault-figures-${process.pid}-${Date.now()}`);
process.env['HANDOFF_FAULT_FIGURES'] = figures;

export default defineConfig({
  test: {
    // Real daemons and git processes on 2 cores: two workers for both projects. `npm run check` runs the
    // two together, so the long fault suites start first and the short files fill in around them (on
    // one after the other, the tail of each left a core idle: ~2 minutes of CI).
    maxWorkers: 2,
    reporters: ['default', './test/fault/figures-reporter.ts'],
    projects: [
      {
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          pool: 'forks',
          // A hang detector, not a race with the scheduler: a multi-step test against real daemons and git
          // takes several times longer on a loaded machine. Deadlines that are behaviour live in the tests.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // No test may leave a daemon behind by accident: auto-start is off unless a test turns it on (auto-start.test.ts).
          env: { HANDOFF_NO_AUTO_START: '1' },
        },
      },
      {
        test: {
          name: 'fault',
          include: ['test/fault/**/*.fault.ts'],
          pool: 'forks',
          testTimeout: 600_000,
          hookTimeout: 120_000,
          // No suite may leave a daemon behind by accident: auto-start (auto-start.ts) is off here.
          env: { HANDOFF_FAULT_FIGURES: figures, HANDOFF_NO_AUTO_START: '1' },
        },
      },
    ],
  },
});
