// Mutation testing of the pure core (issue 37): every file of protocol/ must keep ≥ 90 % of its
// mutants killed by the unit tests. `npm run mutation` runs everything; CI runs it incrementally.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['protocol/**/*.ts'],
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts' },
  coverageAnalysis: 'perTest',
  // A static mutant (code run at module load: the machine's state nodes, the CODES table) cannot be
  // traced to a test, so each re-runs the whole protocol suite: ~1,000 of them cost ~1.5 h a full run,
  // and any test change re-runs them all in CI's incremental gate. The tables are pinned by exhaustive
  // table tests instead (every code against docs/codes.md, every event in every state against a model).
  ignoreStatic: true,
  // The first run covers every test with all ~5,600 mutants instrumented: minutes on a busy 2-core machine.
  dryRunTimeoutMinutes: 20,
  checkers: [],
  concurrency: 2,
  thresholds: { high: 95, low: 90, break: 90 },
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress-append-only'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
