import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completionScript, completionTree } from '../../daemon/cli/commands/completion.js';
import { buildProgram } from '../../daemon/cli/program.js';
import { CLI, sharedDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';

const shared = sharedDaemon();

async function cycleIn(repo: string): Promise<string> {
  const now = await shared.run(['now', '--no-wait'], repo);
  expect(now.json.code).toBe('handoff_ready');
  return (now.json.data?.['cycle'] as { id: string }).id;
}

describe('cycle ids: a unique start will do, and tab completion offers them (issue 32, 6)', () => {
  it('show and verify take a unique start of an id (resolved by the daemon); an ambiguous one is refused (11) naming the candidates', async () => {
    const repo = tempRepo();
    const first = await cycleIn(repo);
    await shared.run(['cancel'], repo);
    const short = first.slice(0, first.length - 3);
    const shown = await shared.run(['show', short], repo);
    expect([shown.code, shown.json.code, shown.json.data?.['cycle']]).toEqual([0, 'cycle', first]);

    const other = await cycleIn(tempRepo());
    const common = first.slice(0, 8);
    expect(other.startsWith(common)).toBe(true);
    const ambiguous = await shared.run(['show', common], repo);
    expect([ambiguous.code, ambiguous.json.code]).toEqual([11, 'ambiguous']);
    expect(ambiguous.json.error?.message).toContain(first);
    expect(ambiguous.json.error?.message).toContain(other);
    const none = await shared.run(['show', '19990101'], repo);
    expect([none.code, none.json.code]).toEqual([10, 'unknown_cycle']);
    const verify = await shared.run(['verify', other.slice(0, 20)], repo);
    expect(verify.json.code).not.toBe('usage_error');
  });

  it('bash completion offers the cycle ids the daemon knows after accept, verify and show', async () => {
    const repo = tempRepo();
    const cycle = await cycleIn(repo);
    // `handoff` on PATH as `npm link` puts it there, bound to this test's state dir.
    const bin = tempDir('bin');
    writeFileSync(join(bin, 'handoff'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" --state-dir "${shared.daemon.stateDir}" "$@"\n`);
    chmodSync(join(bin, 'handoff'), 0o755);
    const script = completionScript('bash', completionTree(await buildProgram('0.0.0')));
    for (const verb of ['accept', 'verify', 'show']) {
      const run = spawnSync(
        'bash',
        ['--norc', '-c', `${script}\nCOMP_WORDS=(handoff ${verb} '${cycle.slice(0, 10)}'); COMP_CWORD=2; _handoff; printf '%s\\n' "\${COMPREPLY[@]}"`],
        {
          cwd: repo,
          encoding: 'utf8',
          env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
        },
      );
      expect(run.stdout.split('\n'), verb).toContain(cycle);
    }
  });
});
