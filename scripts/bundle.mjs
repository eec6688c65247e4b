// Bundles the CLI and the daemon it runs into dist/bin/ (`npm run build`, last step): the file
// package.json's `bin` leads to. A few minified files instead of ~900 modules keep ~8 MB less in every
// daemon (source text, module records, node's CommonJS loader) and start each command sooner
// (docs/performance/daemon.md). The libraries are the same, bundled from node_modules at their pinned
// versions; tsc's output stays in dist/ beside it, for the dashboard's files and for reading stacks.
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundle-options.mjs';

const result = await build({
  ...BUNDLE_OPTIONS,
  entryPoints: { handoff: 'dist/daemon/cli/main.js' },
  outdir: 'dist/bin',
  // Each `await import()` (the hook's fast path, the secret scanner, the daemon) stays a file of its own, loaded when first used.
  splitting: true,
  // What fastify requires only on paths the daemon never takes stays out (~350 KB of source every daemon
  // would hold): its own ajv and fast-json-stringify compilers, built only when no compilersFactory is
  // given (daemon/http/build-server.ts gives one), and light-my-request, loaded by inject() alone. Were
  // one ever needed, it is resolved from node_modules, where it is installed as fastify's dependency.
  external: ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request'],
  metafile: true,
});

// Which sources each output file holds, for the test of what an idle daemon loads (test/integration/idle-modules.test.ts).
const contents = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, { inputs }]) => [file, Object.keys(inputs).sort()]));
writeFileSync('dist/bin/contents.json', `${JSON.stringify(contents, null, 1)}\n`);
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(`bundle: ${Object.keys(contents).length} files in dist/bin/, ${(bytes / 1024).toFixed(0)} KB`);
