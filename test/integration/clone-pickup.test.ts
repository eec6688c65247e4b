import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { piped } from './ingest-support.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * The SessionStart pickup in a clone the receiving daemon never served (a fresh clone on another
 * machine): two daemons with their own state dirs stand for two machines; the hook is the one the
 * installers write, run as the agent runs it.
 */
let machineA: DaemonProcess;
let machineB: DaemonProcess;

beforeAll(async () => {
  [machineA, machineB] = await Promise.all([startDaemon(machineStateDir()), startDaemon(machineStateDir())]);
});
afterAll(async () => {
  await Promise.all([machineA.stop(), machineB.stop()]);
});

const sessionStart = (cwd: string) =>
  piped(
    ['hook', 'claude-session-start', '--state-dir', machineB.stateDir],
    JSON.stringify({ session_id: 'receiver-1', cwd, hook_event_name: 'SessionStart', source: 'startup' }),
    {
      cwd,
    },
  );

describe('the pickup in a fresh clone', () => {
  it("names the accept of the cycle the clone's remote offers; a clone with no handoff branch gets nothing", async () => {
    const { a, remote } = twoClones();
    const plain = join(tempDir('machine-b'), 'plain');
    git(tempDir('x'), 'clone', '-q', remote, plain);
    expect((await sessionStart(plain)).stdout).toBe('');

    writeFileSync(join(a, 'f.txt'), 'one\nfrom A\n');
    const now = await piped(['--state-dir', machineA.stateDir, 'now', '--no-wait', '--json'], '', { cwd: a });
    expect(now.code, now.stderr).toBe(0);
    const cycle = (JSON.parse(now.stdout) as { data: { cycle: { id: string } } }).data.cycle.id;
    const b = join(tempDir('machine-b'), 'b');
    git(tempDir('x'), 'clone', '-q', remote, b);
    const picked = await sessionStart(b);
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout).toContain('a handoff of this repository is on offer on the remote origin');
    expect(picked.stdout).toContain(`handoff accept ${cycle} --from origin --as receiver-1`);
  });
});
