import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';
import { plantedSecrets } from '../support/secrets.js';

const GITHUB = '[withheld: secretlint rule @secretlint/secretlint-rule-github]';

/** Every byte a clone of the remote could read: each object raw, every ref's history as patches, a grep of every ref. */
function remoteHolds(remote: string, secret: string): string[] {
  const found: string[] = [];
  const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: remote, encoding: 'latin1', maxBuffer: 256 * 1024 * 1024 });
  if (objects.includes(secret)) found.push('an object');
  const log = execFileSync('git', ['log', '-p', '--all', '--format=%H%n%B'], { cwd: remote, encoding: 'latin1', maxBuffer: 256 * 1024 * 1024 });
  if (log.includes(secret)) found.push('git log -p --all');
  const refs = git(remote, 'for-each-ref', '--format=%(objectname)').split('\n').filter(Boolean);
  // git grep exits 1 when nothing matches: that is the answer wanted.
  const grep = execFileSync('sh', ['-c', 'git grep -F -l -e "$0" "$@" -- || true', secret, ...refs], { cwd: remote, encoding: 'latin1' });
  if (grep.trim() !== '') found.push(`git grep: ${grep.trim()}`);
  if (git(remote, 'for-each-ref', '--format=%(refname)').includes(secret)) found.push('a ref name');
  return found;
}

const readPackage = (root: string, cycle: string) => ({
  manifest: JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest,
  handoff: readFileSync(join(root, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8'),
});

function stateWithConfig(config: unknown): string {
  const stateDir = tempDir('state');
  chmodSync(stateDir, 0o700);
  writeFileSync(join(stateDir, 'config.json'), JSON.stringify(config));
  return stateDir;
}

describe('hostile: a secret outside the work tree files never reaches the remote', () => {
  it('a token in the validation command and its output, in the capsule, in --reason and in a file name travels only as its marker', async () => {
    const { githubToken: canary } = plantedSecrets();
    // The command holds the token and prints it: both are data the manifest carries.
    const stateDir = stateWithConfig({ validation: { command: `echo "deploying with ${canary}"` } });
    const daemon = await startDaemon(stateDir);
    try {
      const { root, remote } = busyRepo();
      const capsuleFile = join(tempDir('capsule'), 'capsule.json');
      writeFileSync(
        capsuleFile,
        JSON.stringify({ objective: 'ship the fix', next_action: 'run the tests', decisions: [`use the token ${canary} for the registry`] }),
      );
      expect((await cli(stateDir, ['capsule', 'set', '--file', capsuleFile, '--json'], root)).json.code).toBe('capsule_saved');
      mkdirSync(join(root, 'cache'));
      writeFileSync(join(root, 'cache', `${canary}.json`), '{}\n');
      const now = await cli(stateDir, ['now', '--no-wait', '--reason', `quota, token ${canary}`, '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;

      expect(remoteHolds(remote, canary)).toEqual([]);
      const { manifest, handoff } = readPackage(root, cycle);
      expect(JSON.stringify(manifest) + handoff).not.toContain(canary);
      expect(manifest.validations[0]?.command).toBe(`echo "deploying with ${GITHUB}"`);
      expect(manifest.validations[0]?.output_tail).toContain(`deploying with ${GITHUB}`);
      expect(manifest.capsule.decisions).toEqual([`use the token ${GITHUB} for the registry`]);
      expect(manifest.trigger.reason).toBe(`quota, token ${GITHUB}`);
      expect(manifest.repository.dirty.untracked).toContain(`cache/${GITHUB}.json`);
      expect(manifest.withheld).toEqual([
        { path: `cache/${GITHUB}.json`, rule: '@secretlint/secretlint-rule-github', reason: 'secretlint: GITHUB_TOKEN in the file name' },
      ]);
      expect(handoff).toContain(`- \`cache/${GITHUB}.json\``);
      expect(handoff).toContain(`run the tests`);
      // The file itself stayed home, and the rest of the work travelled.
      const commit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`);
      expect(git(remote, 'ls-tree', '-r', '--name-only', commit).split('\n')).not.toContain(`cache/${canary}.json`);
      expect(git(remote, 'show', `${commit}:notes.md`)).toBe('untracked notes');
      const status = await cli(stateDir, ['status'], root);
      // The status is folded to the terminal's width (80 in a pipe): read it with its line breaks undone.
      expect(status.stdout.replace(/\s+/g, ' ')).toContain(`secrets withheld cache/${GITHUB}.json (@secretlint/secretlint-rule-github)`);
    } finally {
      await daemon.stop();
    }
  });

  it("an allow list committed upstream does not push the user's own untracked .env; HANDOFF.md and status say it was ignored", async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const { root, remote } = busyRepo();
      // Upstream commits an allow list naming .env; the user pulls it.
      const upstream = join(tempDir('upstream'), 'clone');
      execFileSync('git', ['clone', '-q', '-b', 'main', remote, upstream]);
      mkdirSync(join(upstream, '.session-handoff'));
      writeFileSync(join(upstream, '.session-handoff', 'allow-secrets'), '.env\n');
      git(upstream, 'add', '-f', '.session-handoff/allow-secrets');
      git(upstream, '-c', 'user.name=up', '-c', 'user.email=up@example.invalid', 'commit', '-q', '-m', 'allow .env');
      git(upstream, 'push', '-q', 'origin', 'HEAD:main');
      git(root, 'pull', '-q', '--no-rebase', '--no-edit', 'origin', 'main');
      writeFileSync(join(root, '.env'), secrets.env);

      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      expect(remoteHolds(remote, secrets.awsSecret)).toEqual([]);
      const { manifest, handoff } = readPackage(root, cycle);
      expect(manifest.withheld?.map((file) => file.path)).toEqual(['.env']);
      expect(manifest.secret_scan).toEqual({ allow_list: 'ignored', allowed: [], unscanned: [] });
      expect(handoff).toContain('`.session-handoff/allow-secrets` was ignored: it is tracked or in a commit, so the remote could have written it');
      const status = await cli(daemon.stateDir, ['status', '--json'], root);
      expect(status.json.data?.['secrets']).toEqual({
        withheld: ['.env (@secretlint/secretlint-rule-aws)'],
        allowed: [],
        unscanned: [],
        allow_list: 'ignored',
      });
      expect((await cli(daemon.stateDir, ['status'], root)).stdout).toContain('the allow list was ignored: it is tracked or in a commit');
    } finally {
      await daemon.stop();
    }
  });

  it('a kubeconfig, a .netrc, a UTF-16 .env and a file that disabled its own scan are withheld and listed', async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const { root, remote } = busyRepo();
      writeFileSync(join(root, 'kubeconfig'), secrets.kubeconfig);
      writeFileSync(join(root, '.netrc'), secrets.netrc);
      writeFileSync(join(root, 'windows.env'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(secrets.env, 'utf16le')]));
      writeFileSync(join(root, 'exempt.ts'), `// secretlint-disable\nexport const t = "${secrets.githubToken}";\n`);
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      for (const secret of [secrets.kubeToken, secrets.kubeKey, secrets.netrcPassword, secrets.githubToken]) expect(remoteHolds(remote, secret)).toEqual([]);
      // UTF-16 bytes are not the UTF-8 text: the remote is searched for the key as the file held it.
      const objects = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: remote, maxBuffer: 256 * 1024 * 1024 });
      expect(objects.includes(Buffer.from(secrets.awsSecret, 'utf16le'))).toBe(false);
      const { manifest, handoff } = readPackage(root, cycle);
      expect(manifest.withheld?.map(({ path, rule }) => `${path} ${rule}`)).toEqual([
        '.netrc @secretlint/secretlint-rule-pattern',
        'exempt.ts @secretlint/secretlint-rule-filter-comments',
        'kubeconfig @secretlint/secretlint-rule-pattern',
        'windows.env @secretlint/secretlint-rule-aws',
      ]);
      for (const path of ['.netrc', 'exempt.ts', 'kubeconfig', 'windows.env']) expect(handoff).toContain(`'${path}' >> .session-handoff/allow-secrets`);
    } finally {
      await daemon.stop();
    }
  });
});
