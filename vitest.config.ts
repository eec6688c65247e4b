import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real daemons and git processes: keep the pool small on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    // A hang detector, not a race with the scheduler: a multi-step test against real daemons and git
    // takes several times longer on a loaded machine. Deadlines that are behaviour live in the tests.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // No test may leave a daemon behind by accident: auto-start is off unless a test turns it on (auto-start.test.ts).
    env: { HANDOFF_NO_AUTO_START: '1' },
  },
});
