import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../schemas/index.js';
import { cli, startDaemon } from '../support/daemon.js';
import { git, tempDir } from '../support/git.js';
import { busyRepo } from '../support/scenario.js';

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
  return dirs.flatMap((dir) => everyFile(dir)).filter((file) => {
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
