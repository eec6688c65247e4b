import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cli, type DaemonProcess } from '../support/daemon.js';
import { git } from '../support/git.js';
import { twoClones } from '../support/scenario.js';
import { machineStateDir } from '../support/machine-state.js';

/**
 * The travelling lease's attack scenes, shared by travelling-lease-attacks and -defences: a machine's
 * state dir (periodic lease sync off, so every follow is one a command asked for), a cycle offered or
 * taken through a bare remote, and records forged there as someone with push rights would.
 */

export const stateDir = machineStateDir;

export const on = (machine: DaemonProcess, args: string[], repo: string) => cli(machine.stateDir, [...args, '--json'], repo);
export type LeaseRecord = {
  schema_version: number;
  cycle: string;
  state: string;
  holder: { executor: string; token: number } | null;
  last_token: number;
  manifest: { path: string; sha256: string };
  at: string;
};
export const status = async (machine: DaemonProcess, repo: string) => (await on(machine, ['status'], repo)).json.data ?? {};

/** Writes `files` as a commit straight into the bare remote and points `ref` at it (forced), as an attacker with push rights would. */
export function forge(remote: string, ref: string, files: Record<string, string>, parents: readonly string[]): string {
  const bare = (args: string[], input?: string) => execFileSync('git', args, { cwd: remote, input, encoding: 'utf8' }).trim();
  const lines = Object.entries(files).map(([name, text]) => `100644 blob ${bare(['hash-object', '-w', '--stdin'], text)}\t${name}`);
  const tree = bare(['mktree'], `${lines.join('\n')}\n`);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'm', GIT_AUTHOR_EMAIL: 'm@m', GIT_COMMITTER_NAME: 'm', GIT_COMMITTER_EMAIL: 'm@m' };
  const commit = execFileSync('git', ['commit-tree', ...parents.flatMap((p) => ['-p', p]), '-m', 'forged', tree], {
    cwd: remote,
    env,
    encoding: 'utf8',
  }).trim();
  bare(['update-ref', ref, commit]);
  return commit;
}

/** A cycle offered by machine A through `origin`; the primary there held token 1 before it evacuated. */
export async function offeredBy(source: DaemonProcess) {
  const { a, b, remote } = twoClones();
  expect((await on(source, ['lease', 'acquire', '--as', 'primary'], a)).json).toMatchObject({ code: 'lease_acquired', data: { token: 1 } });
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
  const now = await on(source, ['now', '--no-wait'], a);
  expect(now.json.code, JSON.stringify(now.json)).toBe('handoff_ready');
  const cycle = (now.json.data?.['cycle'] as { id: string }).id;
  const ref = `refs/handoff/lease/${cycle}`;
  const head = () => git(remote, 'rev-parse', ref);
  const record = (at = ref) => JSON.parse(git(remote, 'show', `${at}:lease.json`)) as LeaseRecord;
  /** A forged record: the head's, edited, as a child of the head (or of `parents`). */
  const push = (edit: Partial<LeaseRecord> | ((r: LeaseRecord) => unknown), parents: readonly string[] = [head()]) => {
    const base = record();
    const next = typeof edit === 'function' ? edit(base) : { ...base, ...edit };
    return forge(remote, ref, { 'lease.json': `${JSON.stringify(next, null, 2)}\n` }, parents);
  };
  return { a, b, remote, cycle, ref, head, record, push };
}

export async function takenBy(source: DaemonProcess, receiver: DaemonProcess) {
  const offer = await offeredBy(source);
  const accepted = await on(receiver, ['accept', offer.cycle, '--from', 'origin', '--as', 'laptop-b', '--checkout'], offer.b);
  expect(accepted.json.code, JSON.stringify(accepted.json)).toBe('accepted');
  // The source follows the remote (status reads it first): both machines know the holder before any attack.
  expect(await status(source, offer.a)).toMatchObject({ state: 'TAKEOVER', lease: { holder: { executor: 'laptop-b' } } });
  return { ...offer, token: Number(accepted.json.data?.['token']) };
}
