import { describe, expect, it } from 'vitest';
import {
  blockedWayOut,
  formatAge,
  statusView,
  step,
  UNKNOWN_WAY_OUT,
  wayOutSentence,
  type WayOutFailure,
  type WorkspaceEvent,
} from '../../../protocol/index.js';
import type { WayOut } from '../../../schemas/index.js';
import { Harness, T0 } from './machine-harness.js';

const VIEW = { nowMs: T0 + 180_000, evacuatePercent: 90, age: formatAge };
const PROVEN: WayOut = {
  state: 'proven',
  checked_at: new Date(T0).toISOString(),
  cause: null,
  fix: null,
  remote: 'origin',
  proven: ['answers without a prompt', 'server hooks take refs/handoff/'],
};

describe('the way out in the machine', () => {
  it('entering PREPARE asks for a rehearsal (an effect, run after the journal), and only then', () => {
    const machine = new Harness();
    const { effects } = step(machine.scope, machine.snapshot, { type: 'PREPARE', reason: null, at: T0, entropy: 'k3f7qa' } as WorkspaceEvent);
    expect(effects).toEqual(['startRehearsal']);
    machine.send({ type: 'PREPARE', reason: null });
    const again = step(machine.scope, machine.snapshot, { type: 'PREPARE', reason: null, at: T0, entropy: 'k3f7qa' } as WorkspaceEvent);
    expect(again.effects).toEqual([]);
  });

  it('records what a rehearsal found (journaled: it changes the workspace), and the same verdict again changes nothing', () => {
    const machine = new Harness();
    expect(statusView(machine.snapshot, T0).way_out).toEqual(UNKNOWN_WAY_OUT);
    expect(machine.send({ type: 'WAY_OUT', way_out: PROVEN }).changed).toBe(true);
    expect(statusView(machine.snapshot, T0).way_out).toEqual(PROVEN);
    expect(machine.send({ type: 'WAY_OUT', way_out: PROVEN }).changed).toBe(false);
    expect(machine.state).toBe('NORMAL');
  });
});

describe('the way out in words (one function for every view)', () => {
  it('says what was proven, how long ago and where to', () => {
    expect(wayOutSentence(PROVEN, VIEW)).toBe('way out: proven 3 min ago (origin, answers without a prompt, server hooks take refs/handoff/)');
    expect(wayOutSentence({ ...PROVEN, remote: null, proven: [] }, VIEW)).toBe('way out: proven 3 min ago (no remote: a local ref, this machine only)');
  });

  it('says a blocked way out in capitals, with its cause, the line to fix it before, and the fix', () => {
    const blocked: WayOut = { ...PROVEN, state: 'blocked', cause: 'origin does not answer: timeout', fix: 'check the network', proven: [] };
    expect(wayOutSentence(blocked, VIEW)).toBe('way out: BLOCKED — origin does not answer: timeout; fix before 90 % — check the network');
  });

  it('claims nothing before a rehearsal', () => {
    expect(wayOutSentence(UNKNOWN_WAY_OUT, VIEW)).toMatch(/^way out: unknown — not rehearsed yet/);
    expect(wayOutSentence(UNKNOWN_WAY_OUT, 'short')).toBeNull();
    expect(wayOutSentence(PROVEN, 'short')).toBe('way out proven');
  });
});

describe('the cause and the fix of a blocked way out', () => {
  const failure: WayOutFailure = {
    remote: 'origin',
    step: 'dry_run',
    kind: 'credentials',
    transport: 'ssh',
    sshAgent: false,
    words: 'Permission denied (publickey).',
    timeoutSeconds: 60,
  };

  it('tells an SSH remote without an agent in the daemon environment from one that refuses the keys', () => {
    expect(blockedWayOut(failure).cause).toMatch(/^origin asks for credentials in the daemon's environment: the daemon has no SSH agent/);
    expect(blockedWayOut({ ...failure, sshAgent: true }).cause).toBe("origin refuses the SSH keys the daemon's agent offers: Permission denied (publickey).");
    expect(blockedWayOut({ ...failure, transport: 'http' }).fix).toMatch(/credential helper that needs no terminal/);
  });

  it('names a repository using Git LFS whose git-lfs does not run for the daemon', () => {
    const lfs = blockedWayOut({ ...failure, step: 'lfs', kind: 'failed', words: "git: 'lfs' is not a git command" });
    expect(lfs.cause).toMatch(/^the repository uses Git LFS and git-lfs does not run in the daemon's environment/);
    expect(lfs.fix).toMatch(/^install git-lfs where the daemon finds it/);
  });

  it('names the server policy when only the probe ref was refused, and a probe it could not delete with the command that does', () => {
    expect(blockedWayOut({ ...failure, step: 'policy', kind: 'rejected', words: 'hook says no' }).cause).toBe(
      "origin's server policy refuses refs under refs/handoff/ (its hooks rejected the probe: hook says no)",
    );
    const left = blockedWayOut({ ...failure, step: 'probe_cleanup', kind: 'rejected', words: 'deny', probeRef: 'refs/handoff/rehearsal/x' });
    expect(left.fix).toMatch(/^delete it on the server \(`git push origin :refs\/handoff\/rehearsal\/x`\)/);
  });
});
