import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanForSecrets } from '../../daemon/evacuation/secret-scan.js';
import { snapshotWorkTree } from '../../daemon/git/index.js';
import { HandoffError } from '../../protocol/index.js';
import { git, tempRepo } from '../support/git.js';
import { userState } from '../support/scenario.js';
import { plantedSecrets } from '../support/secrets.js';

const RULES = {
  aws: '@secretlint/secretlint-rule-aws',
  github: '@secretlint/secretlint-rule-github',
  privateKey: '@secretlint/secretlint-rule-privatekey',
};

/** A repository holding every kind of file the scan decides about. */
function repoWithSecrets() {
  const root = tempRepo();
  const secrets = plantedSecrets();
  writeFileSync(join(root, '.gitignore'), 'ignored.env\n');
  writeFileSync(join(root, 'config.ts'), 'export const api = "https://api.example.invalid";\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'config');
  writeFileSync(join(root, '.env'), secrets.env);
  mkdirSync(join(root, 'keys'));
  writeFileSync(join(root, 'keys', 'id_ed25519'), secrets.privateKey);
  writeFileSync(join(root, 'config.ts'), `export const api = "https://api.example.invalid";\nexport const token = "${secrets.githubToken}";\n`);
  writeFileSync(join(root, 'ignored.env'), secrets.env);
  writeFileSync(join(root, 'notes.md'), 'plain notes, key: value, password: see the vault\n');
  writeFileSync(join(root, 'image.bin'), Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(secrets.env)]));
  writeFileSync(join(root, 'big.txt'), 'x'.repeat(4096));
  return { root, secrets };
}

const options = { timeoutMs: 60_000, maxFileBytes: 2048, now: () => 0 };

describe('the secret scan before a snapshot', () => {
  it('keeps nothing from scan to scan: no profiler mark piles up in a long-running daemon', async () => {
    const root = tempRepo();
    for (let i = 0; i < 20; i += 1) writeFileSync(join(root, `f${i}.ts`), `export const v${i} = ${i};\n`);
    await scanForSecrets(root, { timeoutMs: 60_000, maxFileBytes: 1 << 20, now: () => Date.now() });
    await scanForSecrets(root, { timeoutMs: 60_000, maxFileBytes: 1 << 20, now: () => Date.now() });
    expect(performance.getEntriesByType('mark').filter((mark) => mark.name.startsWith('@core>'))).toEqual([]);
  });

  it('names the files with a secret and the rule, never the secret; ignored files are not read; binary and large ones are said unscanned', async () => {
    const { root, secrets } = repoWithSecrets();
    const scan = await scanForSecrets(root, options);
    expect(scan.withheld.map(({ path, rule }) => ({ path, rule }))).toEqual([
      { path: '.env', rule: RULES.aws },
      { path: 'config.ts', rule: RULES.github },
      { path: 'keys/id_ed25519', rule: RULES.privateKey },
    ]);
    expect(scan.withheld.every((file) => /^secretlint: \w+ on line \d+/.test(file.reason))).toBe(true);
    expect(scan.unscanned).toEqual([
      { path: 'big.txt', why: 'too_large' },
      { path: 'image.bin', why: 'binary' },
    ]);
    expect(scan.scanned).toBe(4);
    const text = JSON.stringify(scan);
    for (const secret of [secrets.awsSecret, secrets.githubToken, secrets.keyBody.slice(20, 80)]) expect(text).not.toContain(secret);
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable file is named unscanned, not a blocked drain (git cannot add it either)', async () => {
    const { root } = repoWithSecrets();
    writeFileSync(join(root, 'locked.txt'), 'private\n');
    chmodSync(join(root, 'locked.txt'), 0o000);
    const scan = await scanForSecrets(root, options);
    expect(scan.unscanned).toContainEqual({ path: 'locked.txt', why: 'unreadable' });
    expect(scan.withheld).toHaveLength(3);
  });

  it('a file on the allow list is pushed on purpose, the others stay withheld', async () => {
    const { root } = repoWithSecrets();
    writeFileSync(join(root, '.git', 'info', 'exclude'), '.session-handoff/\n');
    mkdirSync(join(root, '.session-handoff'));
    writeFileSync(join(root, '.session-handoff', 'allow-secrets'), '# deliberate\nconfig.ts\n');
    const scan = await scanForSecrets(root, options);
    expect(scan.allowed).toEqual(['config.ts']);
    expect(scan.withheld.map((file) => file.path)).toEqual(['.env', 'keys/id_ed25519']);
  });

  it('an allow list that is a symbolic link is refused, not followed: the drain blocks naming it', async () => {
    const { root } = repoWithSecrets();
    mkdirSync(join(root, '.session-handoff'));
    const elsewhere = join(root, '..', `allow-${Date.now()}`);
    writeFileSync(elsewhere, '.env\nconfig.ts\nkeys/id_ed25519\n');
    symlinkSync(elsewhere, join(root, '.session-handoff', 'allow-secrets'));
    await expect(scanForSecrets(root, options)).rejects.toMatchObject({
      code: 'drain_blocked',
      message: expect.stringMatching(/^\.session-handoff\/allow-secrets cannot be read \(ELOOP\)/),
    });
  });

  it('a scanner that throws blocks the drain, naming the scan', async () => {
    const { root } = repoWithSecrets();
    const failing = scanForSecrets(root, { ...options, scanner: () => Promise.reject(new Error('rule crashed')) });
    await expect(failing).rejects.toBeInstanceOf(HandoffError);
    await expect(failing).rejects.toMatchObject({
      code: 'drain_blocked',
      message: expect.stringMatching(/^the secret scan failed on a file \(rule crashed\), so nothing was pushed/),
    });
  });

  it('a scan past its budget blocks the drain rather than push unscanned files', async () => {
    const { root } = repoWithSecrets();
    let t = 0;
    // Every look at the clock is 1 ms later: the budget of 1 ms is gone before the second file.
    const scan = scanForSecrets(root, { ...options, timeoutMs: 1, now: () => t++ });
    await expect(scan).rejects.toMatchObject({
      code: 'drain_blocked',
      message: expect.stringMatching(/^the secret scan did not finish within 1 ms \(1 of 6 files scanned\), so nothing was pushed/),
    });
  });

  it('the snapshot leaves withheld files out (untracked) or at HEAD (tracked, even when staged); the user index, HEAD and files stay', async () => {
    const { root, secrets } = repoWithSecrets();
    // A staged secret in a new file: the scratch index starts from the user's, so it must drop it.
    writeFileSync(join(root, 'staged.env'), secrets.env);
    git(root, 'add', 'staged.env', 'config.ts');
    const before = userState(root);
    const scan = await scanForSecrets(root, options);
    expect(scan.withheld.map((file) => file.path)).toEqual(['.env', 'config.ts', 'keys/id_ed25519', 'staged.env']);
    const head = git(root, 'rev-parse', 'HEAD');
    const result = await snapshotWorkTree(root, {
      ref: 'refs/heads/handoff/t',
      message: 'm',
      createdAt: '2026-11-30T00:00:00Z',
      expectedOld: null,
      withhold: scan.withheld.map((file) => file.path),
    });
    const names = git(root, 'ls-tree', '-r', '--name-only', result.commit).split('\n');
    expect(names).toEqual(['.gitignore', 'README.md', 'big.txt', 'config.ts', 'image.bin', 'notes.md']);
    expect(git(root, 'rev-parse', `${result.commit}:config.ts`)).toBe(git(root, 'rev-parse', `${head}:config.ts`));
    expect(userState(root)).toEqual(before);
    expect(readFileSync(join(root, 'config.ts'), 'utf8')).toContain(secrets.githubToken);
  });
});
