import { describe, expect, it } from 'vitest';
import { cli, sharedDaemon } from '../support/daemon.js';
import { tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

const shared = sharedDaemon();

describe('the CLI answers a person in sentences (real CLI, real daemon)', () => {
  it('bare `handoff` prints the short help and exits 64; a typo gets one suggestion; -v is the version', async () => {
    const bare = await cli(shared.daemon.stateDir, []);
    expect(bare.code).toBe(64);
    expect(bare.stderr).toMatch(/^Core commands:$/m);
    expect(bare.stderr).toMatch(/Run `handoff --help` for every command/);
    const typo = await cli(shared.daemon.stateDir, ['stauts']);
    expect(typo.code).toBe(64);
    expect(typo.stderr).toBe("error: unknown command 'stauts'\nhint: did you mean `handoff status`? `handoff --help` lists what it takes\n");
    expect((await cli(shared.daemon.stateDir, ['-v'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const help = (await cli(shared.daemon.stateDir, ['--help'])).stdout;
    expect(help.indexOf('Core commands:')).toBeLessThan(help.indexOf('Agent plumbing:'));
    expect(help).toMatch(/^Examples:$/m);
  });

  it('errors are in the user’s terms: a cycle id that is not one, a --repo that does not exist', async () => {
    const { root } = busyRepo();
    const show = await cli(shared.daemon.stateDir, ['show', 'nope'], root);
    expect(show.code).toBe(64);
    expect(show.stderr).toMatch(/^error: 'nope' is not a cycle id\nhint: a cycle id looks like/);
    const missing = await cli(shared.daemon.stateDir, ['--repo', '/nonexistent-handoff-dir', 'status']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/^error: no such directory: \/nonexistent-handoff-dir\n/);
  });

  it('lease acquire prints the token; now names each step, the branch and HANDOFF.md; list is a table', async () => {
    const { root } = busyRepo();
    const lease = await cli(shared.daemon.stateDir, ['lease', 'acquire', '--as', 'me'], root);
    expect(lease.stdout).toMatch(/^you hold the lease of .*: token 1 /);
    expect((await cli(shared.daemon.stateDir, ['lease', 'release', '--token', '1'], root)).code).toBe(0);
    const now = await cli(shared.daemon.stateDir, ['now', '--no-wait'], root);
    expect(now.code).toBe(0);
    expect(now.stderr).toMatch(/^ {2}--no-wait: the drain did not wait for the agent$/m);
    expect(now.stderr).toMatch(/^ {2}✓ snapshot +[\d.]+ s {2}\d+ files? scanned for secrets/m);
    expect(now.stderr).not.toMatch(/step 7 of 6|waiting for/);
    expect(now.stdout).toMatch(/^ {2}branch +handoff\/\d{8}T\d{6}Z-[a-z2-7]{6} at [0-9a-f]{12}, pushed to origin and read back$/m);
    expect(now.stdout).toMatch(/^ {2}read +.*\/\.session-handoff\/\d{8}T\d{6}Z-[a-z2-7]{6}\/HANDOFF\.md$/m);
    const list = await cli(shared.daemon.stateDir, ['list'], root);
    expect(list.stdout).toMatch(/^CYCLE +STATE +STARTED +INTEGRITY +WORKSPACE$/m);
    expect(list.stdout).toMatch(/HANDOFF_READY +\d+ s ago +ok \(1\)/);
    // --json stays one Envelope.
    expect((await cli(shared.daemon.stateDir, ['list', '--json'], root)).json.code).toBe('cycles');
  });

  it('outside a repository, status lists the workspaces the daemon serves', async () => {
    const status = await cli(shared.daemon.stateDir, ['status'], tempDir('nowhere'));
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^not inside a git repository; the daemon serves \d+ workspaces?:$/m);
    expect(status.stdout).toMatch(/^ {2}REPOSITORY +STATE +WORST READING +LEASE$/m);
  });
});
