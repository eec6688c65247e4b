import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { floodLeases } from '../support/ref-flood.js';
import { twoClones } from '../support/scenario.js';

// Issue 23: with ~1,500 lease refs on the remote, `accept --latest --from` ran an ls-remote and a fetch
// per ref (~100 s), left every ref in the receiver, and the CLI said daemon_unreachable meanwhile.
const FLOOD = 1500;

let source: DaemonProcess;
let receiver: DaemonProcess;
beforeAll(async () => {
  [source, receiver] = await Promise.all([startDaemon(), startDaemon()]);
});
afterAll(async () => {
  await Promise.all([source.stop(), receiver.stop()]);
});

const handoffRefs = (repo: string) => git(repo, 'for-each-ref', '--format=%(refname)', 'refs/handoff/').split('\n').filter(Boolean);

describe('accept --latest --from among a flood of junk lease refs', () => {
  it('finds the one real offer, takes it, and leaves only that cycle’s records refs in the receiver', async () => {
    const { a, b, remote } = twoClones();
    floodLeases(remote, FLOOD);
    writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
    const now = await cli(source.stateDir, ['now', '--no-wait', '--json'], a);
    expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
    const cycle = (now.json.data?.['cycle'] as { id: string }).id;
    expect(handoffRefs(remote)).toHaveLength(FLOOD + 2);

    const accepted = await cli(receiver.stateDir, ['accept', '--latest', '--from', 'origin', '--as', 'cloud', '--checkout', '--json'], b);
    expect(accepted.json, JSON.stringify(accepted.json.error)).toMatchObject({ code: 'accepted', data: { cycle, state: 'TAKEOVER' } });
    expect(handoffRefs(b)).toEqual([`refs/handoff/lease/${cycle}`, `refs/handoff/packages/${cycle}`]);
  });

  it('with no offer among them: unknown_cycle, the unreadable ones counted, nothing left in the receiver', async () => {
    const { b, remote } = twoClones();
    floodLeases(remote, FLOOD);
    const verified = await cli(receiver.stateDir, ['verify', '--latest', '--from', 'origin', '--json'], b);
    expect(verified.code).toBe(10);
    expect(verified.json.code).toBe('unknown_cycle');
    // A fifth are no cycle id, two fifths hold a lease.json that is not JSON; the closed records are readable.
    expect(verified.json.error?.message).toContain(`(${(FLOOD / 5) * 3} unreadable lease refs passed over:`);
    expect(handoffRefs(b)).toEqual([]);
  });
});
