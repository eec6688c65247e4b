// `npm run bench` (after the build): every test/bench/*.bench.mjs in turn, in name order, each in
// its own node process with the output passed through; exits non-zero if any of them fails.
// A missed target is reported by the bench itself and does not fail the run; a bench that crashes does.
//
// The footprint load runs 1 minute here (not its standalone default of 10) so the whole run stays
// under 10 minutes on a 2-core machine; BENCH_FOOTPRINT_MINUTES=10 npm run bench for the full length.
// Arguments (e.g. --short) are passed to every bench.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.bench.mjs'))
  .sort();
const args = process.argv.slice(2);
const short = process.env.BENCH_SHORT === '1' || args.includes('--short');
const env = { ...process.env, ...(short ? {} : { BENCH_FOOTPRINT_MINUTES: process.env.BENCH_FOOTPRINT_MINUTES ?? '1' }) };
const results = [];
const started = Date.now();

for (const name of benches) {
  console.log(`\n######## ${name} ########`);
  const start = Date.now();
  const run = spawnSync(process.execPath, [join(here, name), ...args], { stdio: 'inherit', env });
  const seconds = ((Date.now() - start) / 1000).toFixed(0);
  const ok = run.status === 0;
  results.push({ name, ok, seconds, why: ok ? '' : run.signal ? `killed by ${run.signal}` : `exit ${run.status}` });
}

console.log(`\n######## benchmarks: ${((Date.now() - started) / 60000).toFixed(1)} min ########`);
for (const { name, ok, seconds, why } of results) console.log(`${ok ? 'ok    ' : 'FAILED'} ${name} (${seconds} s)${why ? ` — ${why}` : ''}`);
process.exitCode = results.every((result) => result.ok) ? 0 : 1;
