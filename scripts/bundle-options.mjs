// How a program of this package is bundled: the CLI (scripts/bundle.mjs) and, to measure the floor
// the same way, the footprint bench's bare fastify server (test/bench/footprint.bench.mjs).
const pkg = (await import('../package.json', { with: { type: 'json' } })).default;

export const BUNDLE_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: `node${pkg.engines.node.replace(/^>=/, '')}`,
  // Names too: keeping them (esbuild's keepNames) costs 1 MB of every daemon's RSS. A stack trace from
  // the bundle is read by running tsc's output instead, the same code: `node dist/daemon/cli/main.js`.
  minify: true,
  // A package's ES module build where it has one: esbuild's default for node prefers `main`, and
  // jsonc-parser's `main` is a UMD file whose require() calls esbuild cannot follow.
  mainFields: ['module', 'main'],
  // The CommonJS libraries (fastify, pino, simple-git, ajv's runtime) call require() for node's own
  // modules; in an ES module only a require made by createRequire can answer them.
  banner: { js: "import { createRequire as __handoffRequire } from 'node:module'; const require = __handoffRequire(import.meta.url);" },
  logLevel: 'warning',
};
