import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon, stateDirWith } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';
import { plantedSecrets, utf32WithBom } from '../support/secrets.js';

/** Whether any object of the remote (every blob, tree and commit, decompressed) holds the text. */
const remoteHolds = (remote: string, text: string): boolean =>
  execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: remote, encoding: 'latin1', maxBuffer: 256 * 1024 * 1024 }).includes(text);

const manifestOf = (root: string, cycle: string) => JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;

describe('secrets in every kind of text the daemon pushes (issue 33 item 7)', () => {
  it('an `.npmrc`-form token in --reason, validation output and the capsule never reaches the remote, not even its tail', async () => {
    // A legacy npm token: only the npm rule's `.npmrc` check (`_authToken=`) knows it.
    const token = randomUUID();
    const line = `//registry.npmjs.org/:_authToken=${token}`;
    const stateDir = stateDirWith({ validation: { command: `echo '${line}'` } });
    const daemon = await startDaemon(stateDir);
    try {
      const { root, remote } = busyRepo();
      const capsuleFile = join(tempDir('capsule'), 'capsule.json');
      writeFileSync(capsuleFile, JSON.stringify({ objective: 'publish', next_action: 'run the tests', decisions: [`registry login: ${line}`] }));
      expect((await cli(stateDir, ['capsule', 'set', '--file', capsuleFile, '--json'], root)).json.code).toBe('capsule_saved');
      // The same line in a `.npmrc` of the work tree: withheld as a file, as before.
      writeFileSync(join(root, '.npmrc'), `${line}\n`);
      const now = await cli(stateDir, ['now', '--no-wait', '--reason', `quota; ${line}`, '--json'], root);
      expect(now.json.code, JSON.stringify(now.json.error)).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;

      const manifest = manifestOf(root, cycle);
      expect((manifest.withheld ?? []).map((file) => file.path)).toEqual(['.npmrc']);
      const marker = '[withheld: secretlint rule @secretlint/secretlint-rule-npm]';
      expect(manifest.trigger.reason).toBe(`quota; //registry.npmjs.org/:${marker}`);
      expect(manifest.capsule.decisions).toEqual([`registry login: //registry.npmjs.org/:${marker}`]);
      expect(manifest.validations[0]?.output_tail).toContain(marker);
      // No byte of the token, its last characters included, is in any object of the remote.
      expect(remoteHolds(remote, token)).toBe(false);
      expect(remoteHolds(remote, token.slice(-11))).toBe(false);
    } finally {
      await daemon.stop();
    }
  });

  it('a .env saved as UTF-32 LE or BE is decoded as an editor would: its secret is withheld, not pushed as clean', async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const { root, remote } = busyRepo();
      writeFileSync(join(root, 'le.env'), utf32WithBom(secrets.env, 'le'));
      writeFileSync(join(root, 'be.env'), utf32WithBom(secrets.env, 'be'));
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code, JSON.stringify(now.json.error)).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;

      const manifest = manifestOf(root, cycle);
      expect((manifest.withheld ?? []).map((file) => [file.path, file.rule])).toEqual([
        ['be.env', '@secretlint/secretlint-rule-aws'],
        ['le.env', '@secretlint/secretlint-rule-aws'],
      ]);
      const pushed = git(remote, 'ls-tree', '-r', '--name-only', `refs/heads/handoff/${cycle}`).split('\n');
      expect(pushed.filter((path) => path.endsWith('.env'))).toEqual([]);
      expect(remoteHolds(remote, utf32WithBom(secrets.awsSecret, 'le').subarray(4).toString('latin1'))).toBe(false);
    } finally {
      await daemon.stop();
    }
  });
});
