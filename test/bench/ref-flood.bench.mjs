// `handoff verify --latest --from REMOTE` against a remote holding only the real offer and against a
// copy of it holding 1,500 junk lease refs besides (issue 23: each ref cost an ls-remote and a fetch,
// ~100 s in all), alternating, each run in a fresh clone, through the built CLI and a real daemon. Target: the flood costs at
// most 2× the single ref, and leaves no refs/handoff ref in the receiver.
//
// Usage: node test/bench/ref-flood.bench.mjs [--short]
//   HANDOFF_BENCH_FLOOD_REFS (default 1500), HANDOFF_BENCH_FLOOD_ROUNDS (default 5; --short 2)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_SHORT, createReport, describeMs, git, machine, removeDir, requireBuild, runCli, startDaemon, stats, tempBase } from './lib.mjs';

requireBuild();

const REFS = Number(process.env.HANDOFF_BENCH_FLOOD_REFS ?? 1500);
const ROUNDS = Number(process.env.HANDOFF_BENCH_FLOOD_ROUNDS ?? (BENCH_SHORT ? 2 : 5));
const TARGET = 2;
const report = createReport('ref-flood');
const base = tempBase('ref-flood');

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const floodCycle = (i) => {
  let entropy = '';
  for (let n = i, k = 0; k < 6; k++, n = Math.floor(n / 32)) entropy = BASE32[n % 32] + entropy;
  return `20200101T000000Z-${entropy}`;
};

/** The flood of test/support/ref-flood.ts: names that are no cycle id, records that are not JSON, closed records. */
function flood(remote, count) {
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const committer = 'committer junk <junk@example.invalid> 1577836800 +0000\n';
  const out = ['blob\nmark :1\n', data('not json'), `commit refs/handoff/junk\nmark :2\n${committer}`, data('junk'), 'M 100644 :1 lease.json\n\n'];
  for (let i = 0; i < count; i++) {
    const cycle = floodCycle(i);
    if (i % 5 === 0) out.push(`reset refs/handoff/lease/junk-${i}\nfrom :2\n\n`);
    else if (i % 5 <= 2) out.push(`reset refs/handoff/lease/${cycle}\nfrom :2\n\n`);
    else {
      const record = {
        schema_version: 1,
        cycle,
        state: 'closed',
        holder: null,
        last_token: 3,
        manifest: { path: 'manifest.json', sha256: '0'.repeat(64) },
        at: '2020-01-01T00:00:00.000Z',
      };
      out.push(`commit refs/handoff/lease/${cycle}\n${committer}`, data('closed'), 'M 100644 inline lease.json\n', data(JSON.stringify(record)), '\n');
    }
  }
  git(remote, ['fast-import', '--quiet'], { input: out.join(''), stdio: ['pipe', 'pipe', 'pipe'] });
  git(remote, ['update-ref', '-d', 'refs/handoff/junk']);
  const listed = git(remote, ['for-each-ref', '--format=%(refname)', 'refs/handoff/lease/']).split('\n').length;
  if (listed < count) throw new Error(`the flood made ${listed} lease refs, not ${count}`);
}

try {
  console.log(`# ${machine()}`);
  const one = join(base, 'one.git');
  const many = join(base, 'flood.git');
  const a = join(base, 'a');
  git(base, ['init', '-q', '--bare', '-b', 'main', one]);
  git(base, ['init', '-q', '-b', 'main', a]);
  writeFileSync(join(a, 'f.txt'), 'one\n');
  git(a, ['add', '.']);
  git(a, ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '-m', 'init']);
  git(a, ['remote', 'add', 'origin', one]);
  git(a, ['push', '-q', '-u', 'origin', 'main']);
  const stateA = join(base, 'state-a');
  const stateB = join(base, 'state-b');
  const source = await startDaemon(stateA);
  try {
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = runCli(stateA, ['now', '--no-wait', '--json'], { cwd: a });
    if (now.envelope?.code !== 'handoff_ready') throw new Error(`the source did not hand off: ${now.stdout}${now.stderr}`);
  } finally {
    await source.stop();
  }
  git(base, ['clone', '-q', '--mirror', one, many]);
  flood(many, REFS);
  // A fresh clone for every run: a receiver that fetched the flood's objects once would find them at home.
  let clones = 0;
  const receiverClone = () => {
    const dir = join(base, `b${clones++}`);
    git(base, ['clone', '-q', '-o', 'one', one, dir]);
    git(dir, ['remote', 'add', 'flood', many]);
    return dir;
  };

  const receiver = await startDaemon(stateB);
  const times = { one: [], flood: [] };
  let leftMost = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const remote of ['one', 'flood']) {
        const b = receiverClone();
        const run = runCli(stateB, ['verify', '--latest', '--from', remote, '--json'], { cwd: b });
        const left = git(b, ['for-each-ref', '--format=%(refname)', 'refs/handoff/']).split('\n').filter(Boolean);
        leftMost = Math.max(leftMost, left.length);
        if (run.envelope?.data?.cycle === undefined) throw new Error(`verify --from ${remote} found no cycle: ${run.stdout}${run.stderr}`);
        times[remote].push(run.ms);
      }
    }
  } finally {
    await receiver.stop();
  }
  const ratio = stats(times.flood).median / stats(times.one).median;
  report.figure(`ref-flood verify --latest --from, 1 lease ref: ${describeMs(times.one)}`);
  report.figure(`ref-flood verify --latest --from, ${REFS + 1} lease refs: ${describeMs(times.flood)}`);
  report.figure(`ref-flood ratio ${ratio.toFixed(2)}× (target ≤ ${TARGET}×): ${report.verdict(ratio <= TARGET, `ratio ${ratio.toFixed(2)}×`)}`);
  report.figure(
    `ref-flood refs/handoff refs left in a receiver, at most: ${leftMost} (the chosen cycle's lease and package): ${report.verdict(leftMost <= 2, `${leftMost} refs left`)}`,
  );
} finally {
  removeDir(base);
}
report.summary();
