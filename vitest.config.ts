import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real daemons and git processes: keep the pool small on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // No test may leave a daemon behind by accident: auto-start is off unless a test turns it on (auto-start.test.ts).
    env: { HANDOFF_NO_AUTO_START: '1' },
  },
});
