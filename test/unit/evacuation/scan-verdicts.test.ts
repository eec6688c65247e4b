import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openVerdictCache, verdictKey, verdictsFile } from '../../../daemon/evacuation/scan-verdicts.js';
import { RECORD_AS, scanForSecrets, secretlintFingerprint, type SecretScanner } from '../../../daemon/evacuation/secret-scan.js';
import { SECRET_VERDICTS_MAX } from '../../../schemas/index.js';
import { tempDir, tempRepo } from '../../support/git.js';
import { plantedSecrets } from '../../support/secrets.js';

const options = { timeoutMs: 60_000, maxFileBytes: 1 << 20, now: () => 0 };

/** A scanner that counts its calls and finds a "secret" wherever `finds` says. */
function countingScanner(finds: (path: string, content: string) => boolean) {
  const calls: string[] = [];
  const scanner: SecretScanner = async (path, content) => {
    // The calls over every file name (not a file's content) find nothing here.
    if (RECORD_AS.includes(path)) return [];
    calls.push(path);
    return finds(path, content) ? [{ rule: 'test-rule', id: 'TEST', line: 1, start: 0, end: Math.min(content.length, 1) }] : [];
  };
  return { scanner, calls };
}

/** A scan of `root` with the verdicts of `stateDir` under `fingerprint`, saved afterwards as the snapshot step does. */
async function cachedScan(root: string, stateDir: string, fingerprint: string, scanner?: SecretScanner) {
  const verdicts = await openVerdictCache(stateDir, fingerprint);
  const scan = await scanForSecrets(root, { ...options, verdicts, ...(scanner === undefined ? {} : { scanner }) });
  await verdicts.save();
  return scan;
}

describe('the secret scan reuses the verdicts of earlier scans, exactly as strict for every new byte', () => {
  it('a second scan of the same files reads them but scans none, and withholds the same files for the same reasons', async () => {
    const root = tempRepo();
    const stateDir = tempDir('state');
    const secrets = plantedSecrets();
    writeFileSync(join(root, '.env'), secrets.env);
    writeFileSync(join(root, 'config.ts'), `export const token = "${secrets.githubToken}";\n`);
    for (let i = 0; i < 10; i += 1) writeFileSync(join(root, `clean-${i}.ts`), `export const v = ${i};\n`);
    const first = await cachedScan(root, stateDir, secretlintFingerprint());
    expect(first).toMatchObject({ scanned: 12, cached: 0 });
    expect(first.withhold).toEqual(['.env', 'config.ts']);

    const second = await cachedScan(root, stateDir, secretlintFingerprint());
    expect(second).toMatchObject({ scanned: 0, cached: 12 });
    expect(second.withheld).toEqual(first.withheld);

    // A secret planted in a file that was judged clean: new bytes, so it is scanned and found.
    writeFileSync(join(root, 'clean-3.ts'), `export const v = 3;\nexport const token = "${plantedSecrets().githubToken}";\n`);
    const third = await cachedScan(root, stateDir, secretlintFingerprint());
    expect(third).toMatchObject({ scanned: 1, cached: 11 });
    expect(third.withhold).toEqual(['.env', 'clean-3.ts', 'config.ts']);
    expect(statSync(verdictsFile(stateDir)).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateDir, 'cache')).mode & 0o777).toBe(0o700);
    expect(readFileSync(verdictsFile(stateDir), 'utf8')).not.toContain(secrets.githubToken);
  });

  it('bytes judged clean under one path are scanned again under another (rules may judge by the name)', async () => {
    const root = tempRepo();
    const stateDir = tempDir('state');
    const { scanner, calls } = countingScanner((path) => path.endsWith('.env'));
    writeFileSync(join(root, 'notes.txt'), 'TOKEN=abc\n');
    expect((await cachedScan(root, stateDir, 'fp', scanner)).withhold).toEqual([]);
    writeFileSync(join(root, 'prod.env'), 'TOKEN=abc\n');
    const again = await cachedScan(root, stateDir, 'fp', scanner);
    expect(again).toMatchObject({ scanned: 1, cached: 1, withhold: ['prod.env'] });
    expect(calls).toEqual(['notes.txt', 'prod.env']);
  });

  it('a verdict of another scanner fingerprint (an upgrade, a changed rule) is not used', async () => {
    const root = tempRepo();
    const stateDir = tempDir('state');
    writeFileSync(join(root, 'a.ts'), 'export const key = "looks harmless";\n');
    const old = countingScanner(() => false);
    expect((await cachedScan(root, stateDir, 'secretlint@1', old.scanner)).withhold).toEqual([]);
    const upgraded = countingScanner(() => true);
    const scan = await cachedScan(root, stateDir, 'secretlint@2', upgraded.scanner);
    expect(scan).toMatchObject({ scanned: 1, cached: 0, withhold: ['a.ts'] });
    expect(scan.withheld[0]?.reason).toBe('secretlint: TEST on line 1');
    // The daemon's fingerprint names secretlint's versions and the rule configuration.
    expect(secretlintFingerprint()).toMatch(/@secretlint\/core@\d+\.\d+\.\d+/);
    expect(secretlintFingerprint()).toContain('netrc password');
  });

  it('a cache file that is cut short, oversized or not of its schema is ignored, never trusted in part', async () => {
    const root = tempRepo();
    const secrets = plantedSecrets();
    writeFileSync(join(root, '.env'), secrets.env);
    const fingerprint = secretlintFingerprint();
    const key = verdictKey(fingerprint, 'file', '.env', readFileSync(join(root, '.env')));
    // The entry that would clear the file, in each broken form; the last one is well formed, so it counts.
    const clean = JSON.stringify({ version: 1, entries: [[key, null]] });
    const broken = [
      clean.slice(0, -3),
      `${clean}${' '.repeat(5 << 20)}`,
      JSON.stringify({ version: 2, entries: [[key, null]] }),
      clean.replace('null', '"clean"'),
    ];
    for (const text of broken) {
      const stateDir = tempDir('state');
      mkdirSync(join(stateDir, 'cache'), { mode: 0o700 });
      writeFileSync(verdictsFile(stateDir), text);
      const scan = await cachedScan(root, stateDir, fingerprint);
      expect(scan).toMatchObject({ scanned: 1, cached: 0, withhold: ['.env'] });
    }
    const stateDir = tempDir('state');
    mkdirSync(join(stateDir, 'cache'), { mode: 0o700 });
    writeFileSync(verdictsFile(stateDir), clean);
    expect(await cachedScan(root, stateDir, fingerprint)).toMatchObject({ scanned: 0, cached: 1, withhold: [] });
  });

  it('keeps at most SECRET_VERDICTS_MAX verdicts, the least recently used going first', async () => {
    const stateDir = tempDir('state');
    const cache = await openVerdictCache(stateDir, 'fp');
    const key = (i: number) => verdictKey('fp', 'file', `f${i}`, Buffer.from(''));
    for (let i = 0; i <= SECRET_VERDICTS_MAX; i += 1) {
      cache.set(key(i), null);
      // The first one stays in use.
      if (i === 10) expect(cache.get(key(0))).toBeNull();
    }
    await cache.save();
    const reopened = await openVerdictCache(stateDir, 'fp');
    expect(reopened.get(key(0))).toBeNull();
    expect(reopened.get(key(1))).toBeUndefined();
    expect(reopened.get(key(SECRET_VERDICTS_MAX))).toBeNull();
  });
});

describe('a scan past its budget', () => {
  it('keeps the verdicts of the files it reached, so the next scan (handoff resume) scans only the rest', async () => {
    const root = tempRepo();
    const stateDir = tempDir('state');
    for (let i = 0; i < 20; i += 1) writeFileSync(join(root, `f${String(i).padStart(2, '0')}.ts`), `export const v = ${i};\n`);
    const { scanner, calls } = countingScanner(() => false);
    let clock = 0;
    const verdicts = await openVerdictCache(stateDir, 'fp');
    // Each file scanned (not the one call over the names) moves the clock 10 ms; the budget ends after 12 of them.
    const slow: SecretScanner = async (path, content) => {
      if (!RECORD_AS.includes(path)) clock += 10;
      return scanner(path, content);
    };
    await expect(scanForSecrets(root, { ...options, timeoutMs: 115, now: () => clock, scanner: slow, verdicts })).rejects.toThrow(
      /did not finish within 115 ms/,
    );
    await verdicts.save();
    expect(calls).toHaveLength(12);
    const resumed = await cachedScan(root, stateDir, 'fp', scanner);
    expect(resumed).toMatchObject({ scanned: 8, cached: 12 });
  });
});
