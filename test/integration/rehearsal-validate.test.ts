import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

/*
 * `rehearsal.validate` (daemon/rehearsal/validation-evidence.ts): the validation command once at
 * PREPARE, its outcome kept as evidence; EVACUATE takes it while the work tree has not changed since
 * (`reuse`), and HANDOFF.md says which it was.
 */

const daemons: DaemonProcess[] = [];
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
});

interface ManifestValidation {
  command: string;
  status: string;
  ran_in?: string;
  ran_at?: string;
}

/** A daemon whose validation command counts its runs in a file outside the repository, set through `handoff config set`. */
async function validatingDaemon(root: string, mode: 'reuse' | 'rerun'): Promise<{ daemon: DaemonProcess; runs: () => number }> {
  const stateDir = join(tempDir('validate'), 'state');
  const marks = join(tempDir('marks'), 'runs');
  const set = async (key: string, value: string) => expect((await cli(stateDir, ['config', 'set', key, value, '--json'], root)).json.code).toBe('ok');
  await set('validation.command', `echo ran >> '${marks}'; echo checks passed`);
  await set('rehearsal.validate', mode);
  const daemon = await startDaemon(stateDir);
  daemons.push(daemon);
  return { daemon, runs: () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean).length : 0) };
}

async function prepareAndValidate(daemon: DaemonProcess, root: string): Promise<string[]> {
  expect((await cli(daemon.stateDir, ['prepare', '--json'], root)).json.code).toBe('prepare_entered');
  return until(
    'the validation at PREPARE',
    async () => {
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      const proven = (status.json.data as { way_out: { proven: string[] } }).way_out.proven;
      return proven.some((line) => line.startsWith('validation ')) ? proven : undefined;
    },
    60_000,
  );
}

async function evacuate(daemon: DaemonProcess, root: string): Promise<{ validation: ManifestValidation; handoff: string }> {
  const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
  expect(now.json.code).toBe('handoff_ready');
  const id = (now.json.data?.['cycle'] as { id: string }).id;
  const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', id, 'manifest.json'), 'utf8')) as { validations: ManifestValidation[] };
  expect(manifest.validations).toHaveLength(1);
  return { validation: manifest.validations[0] as ManifestValidation, handoff: readFileSync(join(root, '.session-handoff', id, 'HANDOFF.md'), 'utf8') };
}

describe('rehearsal.validate', () => {
  it('reuse: PREPARE runs the validation once; EVACUATE takes its outcome while the tree is unchanged, and HANDOFF.md says so', async () => {
    const { root } = busyRepo();
    const { daemon, runs } = await validatingDaemon(root, 'reuse');
    const proven = await prepareAndValidate(daemon, root);
    expect(proven).toContainEqual(expect.stringMatching(/^validation passed at PREPARE \(\d+ s\)$/));
    expect(runs()).toBe(1);

    const { validation, handoff } = await evacuate(daemon, root);
    expect(runs()).toBe(1);
    expect(validation).toMatchObject({ status: 'passed', ran_in: 'prepare' });
    expect(Date.parse(validation.ran_at ?? '')).toBeGreaterThan(0);
    expect(handoff).toMatch(/\*\*PASSED\*\* `echo ran >> .*` \(exit 0, \d+ ms\) — passed at PREPARE \d+ s before this package, work tree unchanged since/);
  });

  it('reuse: a work tree changed after PREPARE runs it again at evacuation', async () => {
    const { root } = busyRepo();
    const { daemon, runs } = await validatingDaemon(root, 'reuse');
    await prepareAndValidate(daemon, root);
    expect(runs()).toBe(1);
    writeFileSync(join(root, 'notes.md'), 'edited after the validation at PREPARE\n');

    const { validation, handoff } = await evacuate(daemon, root);
    expect(runs()).toBe(2);
    expect(validation).toMatchObject({ status: 'passed', ran_in: 'evacuation' });
    expect(handoff).toMatch(/\*\*PASSED\*\* `echo ran >> .*` \(exit 0, \d+ ms\) — run at evacuation/);
  });

  it('rerun: PREPARE runs it as an early word, EVACUATE runs it again even on an unchanged tree', async () => {
    const { root } = busyRepo();
    const { daemon, runs } = await validatingDaemon(root, 'rerun');
    await prepareAndValidate(daemon, root);
    expect(runs()).toBe(1);
    const { validation } = await evacuate(daemon, root);
    expect(runs()).toBe(2);
    expect(validation.ran_in).toBe('evacuation');
  });
});
