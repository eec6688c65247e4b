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
      message: expect.stringMatching(/^the secret scan failed on the file names \(rule crashed\), so nothing was pushed/),
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

describe('what the scan knows beyond the recommended preset', () => {
  const PATTERN = '@secretlint/secretlint-rule-pattern';

  it('withholds a kubeconfig (bearer token, client-key-data) and a .netrc password, naming the pattern', async () => {
    const root = tempRepo();
    const secrets = plantedSecrets();
    mkdirSync(join(root, '.kube'));
    writeFileSync(join(root, '.kube', 'config'), secrets.kubeconfig);
    // The client key alone, so each kubeconfig shape is shown to be found by itself.
    writeFileSync(join(root, 'robot.yaml'), `users:\n- name: robot\n  user:\n    client-key-data: ${secrets.kubeKey}\n`);
    writeFileSync(join(root, '.netrc'), secrets.netrc);
    writeFileSync(join(root, 'notes.md'), 'by default the password is in the vault; this machine has a token: see the wiki\n');
    const scan = await scanForSecrets(root, options);
    expect(scan.withheld).toEqual([
      { path: '.kube/config', rule: PATTERN, reason: 'secretlint: kubeconfig token on line 6 (+1 more)' },
      { path: '.netrc', rule: PATTERN, reason: 'secretlint: netrc password on line 3' },
      { path: 'robot.yaml', rule: PATTERN, reason: 'secretlint: kubeconfig client key on line 4' },
    ]);
    const text = JSON.stringify(scan);
    for (const secret of [secrets.kubeToken, secrets.kubeKey, secrets.netrcPassword]) expect(text).not.toContain(secret);
  });

  it('reads UTF-16 text (with a BOM either way, or without one) and UTF-8 with a BOM; binary stays unscanned', async () => {
    const root = tempRepo();
    const secrets = plantedSecrets();
    const le = Buffer.from(secrets.env, 'utf16le');
    writeFileSync(join(root, 'bom-le.env'), Buffer.concat([Buffer.from([0xff, 0xfe]), le]));
    writeFileSync(join(root, 'bom-be.env'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]));
    writeFileSync(join(root, 'plain-le.env'), le);
    writeFileSync(join(root, 'bom-utf8.env'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(secrets.env)]));
    writeFileSync(join(root, 'image.bin'), Buffer.concat([Buffer.from([0, 1, 2, 0, 0, 7]), Buffer.from(secrets.env)]));
    const scan = await scanForSecrets(root, options);
    expect(scan.withheld.map(({ path, rule }) => `${path} ${rule}`)).toEqual(
      ['bom-be.env', 'bom-le.env', 'bom-utf8.env', 'plain-le.env'].map((path) => `${path} ${RULES.aws}`),
    );
    expect(scan.unscanned).toEqual([{ path: 'image.bin', why: 'binary' }]);
  });

  it('a secretlint-disable comment that HEAD does not have is a finding; one committed before is honoured', async () => {
    const root = tempRepo();
    const secrets = plantedSecrets();
    writeFileSync(join(root, 'fixture.ts'), `// secretlint-disable -- test fixture\nexport const sample = "${secrets.githubToken}";\n`);
    git(root, 'add', 'fixture.ts');
    git(root, 'commit', '-q', '-m', 'fixture');
    // The committed comment still covers an edit below it.
    writeFileSync(join(root, 'fixture.ts'), `// secretlint-disable -- test fixture\nexport const sample = "${plantedSecrets().githubToken}";\n`);
    writeFileSync(join(root, 'agent.ts'), `export const token = "${secrets.githubToken}"; // secretlint-disable-line\n`);
    writeFileSync(join(root, 'quiet.ts'), '/* secretlint-disable */\nexport const nothing = 1;\n');
    const scan = await scanForSecrets(root, options);
    expect(scan.withheld).toEqual([
      {
        path: 'agent.ts',
        rule: '@secretlint/secretlint-rule-filter-comments',
        reason: "secretlint: a secretlint-disable comment on line 1 that HEAD's version of the file does not have",
      },
      {
        path: 'quiet.ts',
        rule: '@secretlint/secretlint-rule-filter-comments',
        reason: "secretlint: a secretlint-disable comment on line 1 that HEAD's version of the file does not have",
      },
    ]);
  });

  it('a file name or a link target holding a secret withholds the file; the name is shown only with its marker', async () => {
    const root = tempRepo();
    const secrets = plantedSecrets();
    mkdirSync(join(root, `cache-${secrets.githubToken}`));
    writeFileSync(join(root, `cache-${secrets.githubToken}`, 'data.txt'), 'plain\n');
    symlinkSync(`/tmp/${secrets.githubToken}`, join(root, 'latest'));
    writeFileSync(join(root, 'fine.txt'), 'plain\n');
    const scan = await scanForSecrets(root, options);
    expect(scan.withhold).toEqual([`cache-${secrets.githubToken}/data.txt`, 'latest']);
    expect(scan.withheld).toEqual([
      { path: `cache-[withheld: secretlint rule ${RULES.github}]/data.txt`, rule: RULES.github, reason: 'secretlint: GITHUB_TOKEN in the file name' },
      { path: 'latest', rule: RULES.github, reason: 'secretlint: GITHUB_TOKEN on line 1' },
    ]);
    expect(JSON.stringify(scan.withheld)).not.toContain(secrets.githubToken);
  });

  it('an allow list the remote could have supplied (tracked, or in any commit) is ignored and said so; an untracked one is read', async () => {
    const { root } = repoWithSecrets();
    mkdirSync(join(root, '.session-handoff'));
    writeFileSync(join(root, '.session-handoff', 'allow-secrets'), '.env\nconfig.ts\n');
    git(root, 'add', '-f', '.session-handoff/allow-secrets');
    const tracked = await scanForSecrets(root, options);
    expect(tracked.allow_list).toBe('ignored');
    expect(tracked.allowed).toEqual([]);
    expect(tracked.withheld.map((file) => file.path)).toEqual(['.env', 'config.ts', 'keys/id_ed25519']);
    // Committed once, then untracked: a pull brought it, so it is still not the user's.
    git(root, 'commit', '-q', '-m', 'upstream allow list');
    git(root, 'rm', '-q', '--cached', '.session-handoff/allow-secrets');
    git(root, 'commit', '-q', '-m', 'untrack it');
    expect((await scanForSecrets(root, options)).allow_list).toBe('ignored');

    const fresh = repoWithSecrets().root;
    writeFileSync(join(fresh, '.git', 'info', 'exclude'), '.session-handoff/\n');
    mkdirSync(join(fresh, '.session-handoff'));
    writeFileSync(join(fresh, '.session-handoff', 'allow-secrets'), 'config.ts\n');
    const own = await scanForSecrets(fresh, options);
    expect({ source: own.allow_list, allowed: own.allowed }).toEqual({ source: 'read', allowed: ['config.ts'] });
    expect((await scanForSecrets(tempRepo(), options)).allow_list).toBe('absent');
  });
});
