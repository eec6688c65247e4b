import { describe, expect, it } from 'vitest';
import { flagsToAdd } from '../../../daemon/cli/daemon-flags.js';
import { DAEMON_NODE_FLAGS, RELAUNCHED } from '../../../daemon/node-flags.js';

describe('which start of node the daemon needs again (daemon/cli/relaunch.ts)', () => {
  it('the foreground daemon without its flags, however the options are placed', () => {
    for (const args of [['daemon'], ['daemon', '--port', '0'], ['--state-dir', '/s', 'daemon', '--json'], ['--json', '--repo', '/r', 'daemon', '--auto']]) {
      expect(flagsToAdd(args, [], {})).toEqual(DAEMON_NODE_FLAGS);
    }
  });

  it('not for another command, `daemon stop`, an option value that reads `daemon`, or a node that has the flags', () => {
    for (const args of [['status'], ['daemon', 'stop'], ['--state-dir', '/s', 'daemon', 'stop'], ['--state-dir', 'daemon', 'status'], ['hook', 'daemon'], []]) {
      expect(flagsToAdd(args, [], {})).toEqual([]);
    }
    expect(flagsToAdd(['daemon'], [...DAEMON_NODE_FLAGS], {})).toEqual([]);
    // The user's own value for a flag is theirs: the daemon does not start again to replace it.
    expect(
      flagsToAdd(
        ['daemon'],
        DAEMON_NODE_FLAGS.map((flag) => `${flag.split('=')[0] ?? ''}=8`),
        {},
      ),
    ).toEqual([]);
  });

  it('never a second time, and the marker goes no further than the daemon started with it', () => {
    const env: NodeJS.ProcessEnv = { [RELAUNCHED]: '1', PATH: '/usr/bin' };
    expect(flagsToAdd(['daemon'], [], env)).toEqual([]);
    expect(env).toEqual({ PATH: '/usr/bin' });
  });
});
