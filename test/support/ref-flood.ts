import { execFileSync } from 'node:child_process';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** The i-th cycle id of a flood: a real id's shape, dated 2020 so no real cycle shares it. */
export function floodCycle(i: number): string {
  let entropy = '';
  for (let n = i, k = 0; k < 6; k++, n = Math.floor(n / 32)) entropy = BASE32[n % 32] + entropy;
  return `20200101T000000Z-${entropy}`;
}

/**
 * `count` junk lease refs in the bare repository `remote`, made by one `git fast-import`: a fifth of
 * names that are no cycle id, two fifths of cycle ids on one commit whose lease.json is not JSON, and
 * two fifths of valid but closed records (a long history), each a commit of its own.
 */
export function floodLeases(remote: string, count: number): void {
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const committer = 'committer junk <junk@example.invalid> 1577836800 +0000\n';
  const out: string[] = ['blob\nmark :1\n', data('not json'), `commit refs/handoff/junk\nmark :2\n${committer}`, data('junk'), 'M 100644 :1 lease.json\n\n'];
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
  execFileSync('git', ['fast-import', '--quiet'], { cwd: remote, input: out.join('') });
  // The commit the shared refs point at needed a ref of its own while it was made.
  execFileSync('git', ['update-ref', '-d', 'refs/handoff/junk'], { cwd: remote });
}
