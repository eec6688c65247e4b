import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo, twoClones, userState } from '../support/scenario.js';
import { plantedSecrets, type PlantedSecrets } from '../support/secrets.js';

const URL_TOKEN = 'ghp_PLANTEDurlTOKEN0123456789';
const ENV_TOKEN = 'planted-env-secret-9876543210';
const OUTPUT_PASSWORD = 'planted-output-password-555';

function everyFile(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) everyFile(path, out);
    else out.push(path);
  }
  return out;
}

function leaks(dirs: string[]): string[] {
  return dirs
    .flatMap((dir) => everyFile(dir))
    .filter((file) => {
      const text = readFileSync(file, 'latin1');
      return [URL_TOKEN, ENV_TOKEN, OUTPUT_PASSWORD].some((secret) => text.includes(secret));
    });
}

describe('no secret is ever written', () => {
  it('a token in the remote URL, in the environment and in validation output never reaches a file', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(
      join(stateDir, 'config.json'),
      JSON.stringify({ validation: { command: `echo "token is $API_TOKEN"; echo "cloning https://bob:${OUTPUT_PASSWORD}@example.invalid/x.git"` } }),
    );
    const daemon = await startDaemon(stateDir, { API_TOKEN: ENV_TOKEN });
    const packages: string[] = [];
    try {
      const { root, remote } = busyRepo();
      packages.push(join(root, '.session-handoff'));
      const secretUrl = `https://alice:${URL_TOKEN}@git.example.invalid/team/repo.git`;
      git(root, 'remote', 'set-url', 'origin', secretUrl);
      // The credentialed URL is what the user configured; insteadOf sends the bytes to the bare remote.
      git(root, 'config', `url.${remote}.insteadOf`, secretUrl);
      const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      const manifest = JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest;
      expect(manifest.repository.remote_url).toBe('https://git.example.invalid/team/repo.git');
      expect(manifest.validations[0]?.output_tail).toContain('token is [redacted]');
      expect(manifest.validations[0]?.output_tail).toContain('https://example.invalid/x.git');

      // And a remote that fails: its error text goes to the journal and status, still without the token.
      const failing = busyRepo();
      packages.push(join(failing.root, '.session-handoff'));
      git(failing.root, 'remote', 'set-url', 'origin', `http://carol:${URL_TOKEN}@127.0.0.1:9/x.git`);
      const blocked = await cli(stateDir, ['now', '--no-wait', '--json'], failing.root);
      expect(blocked.json.code).toBe('drain_blocked');
      expect(JSON.stringify(blocked.json)).not.toContain(URL_TOKEN);
      expect(JSON.stringify((await cli(stateDir, ['status', '--json'], failing.root)).json)).not.toContain(URL_TOKEN);
    } finally {
      await daemon.stop();
    }
    // config.json is the operator's own file holding the command; everything the daemon wrote is checked.
    expect(leaks([stateDir, ...packages]).filter((file) => !file.endsWith('/config.json'))).toEqual([]);
  });
});

/** Every object of a repository, raw: what a clone of it could ever read. */
const allObjects = (repo: string): string =>
  execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: repo, encoding: 'latin1', maxBuffer: 256 * 1024 * 1024 });

const pieces = (secrets: PlantedSecrets): string[] => [secrets.awsSecret, secrets.githubToken, secrets.keyBody.slice(20, 80)];

/** The busy repository with a `.env`, a private key, a tracked config that gained a token and an ignored secret. */
function repoWithSecrets(secrets: PlantedSecrets) {
  const repo = busyRepo();
  const { root } = repo;
  writeFileSync(join(root, 'config.ts'), 'export const api = "https://api.example.invalid";\n');
  git(root, 'add', 'config.ts');
  git(root, 'commit', '-q', '-m', 'config', '--', 'config.ts');
  writeFileSync(join(root, 'config.ts'), `export const api = "https://api.example.invalid";\nexport const token = "${secrets.githubToken}";\n`);
  writeFileSync(join(root, '.env'), secrets.env);
  writeFileSync(join(root, 'id_ed25519'), secrets.privateKey);
  // build/ is ignored: never scanned, never pushed.
  writeFileSync(join(root, 'build', 'deploy.env'), secrets.env);
  return repo;
}

const readPackage = (root: string, cycle: string) => ({
  manifest: JSON.parse(readFileSync(join(root, '.session-handoff', cycle, 'manifest.json'), 'utf8')) as Manifest,
  handoff: readFileSync(join(root, '.session-handoff', cycle, 'HANDOFF.md'), 'utf8'),
});

describe('secrets never leave silently', () => {
  it('withholds a .env, a private key and a token added to a tracked file; lists them with the include command; the user keeps everything', async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const { root, remote } = repoWithSecrets(secrets);
      const head = git(root, 'rev-parse', 'HEAD');
      const before = userState(root);
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      expect(userState(root)).toEqual(before);

      const remoteObjects = allObjects(remote);
      const localObjects = allObjects(root);
      for (const secret of pieces(secrets)) {
        expect(remoteObjects).not.toContain(secret);
        // Withheld files are not even hashed into the user's object store.
        expect(localObjects).not.toContain(secret);
      }
      const commit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`);
      const names = git(remote, 'ls-tree', '-r', '--name-only', commit).split('\n');
      expect(names).not.toContain('.env');
      expect(names).not.toContain('id_ed25519');
      expect(names).not.toContain('build/deploy.env');
      // The tracked file is at its committed content; the rest of the work tree travelled (no false positive).
      expect(git(remote, 'rev-parse', `${commit}:config.ts`)).toBe(git(root, 'rev-parse', `${head}:config.ts`));
      expect(git(remote, 'show', `${commit}:notes.md`)).toBe('untracked notes');
      expect(git(remote, 'show', `${commit}:src/app.ts`)).toBe('export const a = 3;');

      const { manifest, handoff } = readPackage(root, cycle);
      expect(manifest.withheld?.map(({ path, rule }) => ({ path, rule }))).toEqual([
        { path: '.env', rule: '@secretlint/secretlint-rule-aws' },
        { path: 'config.ts', rule: '@secretlint/secretlint-rule-github' },
        { path: 'id_ed25519', rule: '@secretlint/secretlint-rule-privatekey' },
      ]);
      const headings = handoff.split('\n').filter((line) => line.startsWith('## '));
      expect(headings.slice(0, 2)).toEqual(['## Withheld: files that hold a secret', '## Next action']);
      for (const path of ['.env', 'config.ts', 'id_ed25519'])
        expect(handoff).toContain(`mkdir -p .session-handoff && printf '%s\\n' '${path}' >> .session-handoff/allow-secrets`);
      for (const secret of pieces(secrets)) expect(handoff + JSON.stringify(manifest)).not.toContain(secret);
    } finally {
      await daemon.stop();
    }
  });

  it('the include command from HANDOFF.md makes the next snapshot carry that file on purpose, and only that one', async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const first = repoWithSecrets(secrets);
      const firstNow = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], first.root);
      const { handoff } = readPackage(first.root, (firstNow.json.data?.['cycle'] as { id: string }).id);
      const include = handoff.split('\n').find((line) => line.startsWith('mkdir -p .session-handoff && printf') && line.includes("'config.ts'"));
      expect(include).toBeDefined();

      const { root, remote } = repoWithSecrets(secrets);
      execFileSync('sh', ['-c', include ?? 'false'], { cwd: root });
      const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      const commit = git(remote, 'rev-parse', `refs/heads/handoff/${cycle}`);
      expect(git(remote, 'show', `${commit}:config.ts`)).toContain(secrets.githubToken);
      expect(readPackage(root, cycle).manifest.withheld?.map((file) => file.path)).toEqual(['.env', 'id_ed25519']);
      expect(allObjects(remote)).not.toContain(secrets.awsSecret);
    } finally {
      await daemon.stop();
    }
  });

  it('the primary keeps its withheld .env through the whole return: the out tree without it still counts as frozen', async () => {
    const daemon = await startDaemon();
    try {
      const secrets = plantedSecrets();
      const { a, b, remote } = twoClones();
      const run = (args: string[], cwd: string) => cli(daemon.stateDir, [...args, '--json'], cwd);
      writeFileSync(join(a, '.env'), secrets.env);
      writeFileSync(join(a, 'f.txt'), 'one\ntwo\n');
      const now = await run(['now', '--no-wait'], a);
      expect(now.json.code).toBe('handoff_ready');
      const cycle = (now.json.data?.['cycle'] as { id: string }).id;
      expect((await run(['accept', cycle, '--as', 'emergency', '--checkout'], b)).code).toBe(0);
      writeFileSync(join(b, 'done.md'), 'finished by B\n');
      expect((await run(['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
      const back = await run(['accept', cycle, '--return', '--as', 'primary', '--checkout'], a);
      expect(back.json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
      expect(readFileSync(join(a, 'done.md'), 'utf8')).toBe('finished by B\n');
      expect(readFileSync(join(a, '.env'), 'utf8')).toBe(secrets.env);
      expect(allObjects(remote)).not.toContain(secrets.awsSecret);
    } finally {
      await daemon.stop();
    }
  });

  it('a scan past its budget blocks the drain on the snapshot step with a clear reason; nothing is pushed', async () => {
    const stateDir = tempDir('state');
    chmodSync(stateDir, 0o700);
    writeFileSync(join(stateDir, 'config.json'), JSON.stringify({ secret_scan: { timeout_ms: 1 } }));
    const daemon = await startDaemon(stateDir);
    try {
      const secrets = plantedSecrets();
      const { root, remote } = repoWithSecrets(secrets);
      const now = await cli(stateDir, ['now', '--no-wait', '--json'], root);
      expect(now.json.code).toBe('drain_blocked');
      const status = await cli(stateDir, ['status', '--json'], root);
      expect(status.json.data?.['blocked']).toMatch(/the secret scan did not finish within 1 ms .*so nothing was pushed/);
      expect(git(remote, 'for-each-ref', 'refs/heads/handoff/', 'refs/handoff/')).toBe('');
      expect(allObjects(remote)).not.toContain(secrets.githubToken);
    } finally {
      await daemon.stop();
    }
  });
});
