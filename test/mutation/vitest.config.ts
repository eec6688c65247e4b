import { defineConfig } from 'vitest/config';

// The suite Stryker runs: the pure core's own unit tests. They need no build, no git and no daemon,
// so each mutant costs milliseconds; the whole unit suite's first run alone took over 5 minutes on a
// loaded 2-core machine (and needs `npm run build` first).
export default defineConfig({
  test: {
    include: ['test/unit/protocol/**/*.test.ts'],
    // A hang detector: no protocol test needs more than a few seconds, even instrumented.
    testTimeout: 60_000,
  },
});
