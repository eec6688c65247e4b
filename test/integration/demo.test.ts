import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { git, tempDir } from '../support/git.js';

const DEMO = fileURLToPath(new URL('../../examples/demo/run-demo.mjs', import.meta.url));
const PAYLOADS = new URL('../../examples/demo/payloads/', import.meta.url);
const FIXTURES = new URL('../fixtures/reference-telemetry/', import.meta.url);
const dir = tempDir('demo');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // What `npm run demo` runs after its build (the test run has built already).
    execFile(process.execPath, [DEMO, '--dir', dir], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run demo (acceptance 3)', () => {
  it('narrates one full cycle NORMAL → … → CLOSED on a scratch repository with a bare remote, and says where to look', { timeout: 120_000 }, async () => {
    const result = await run();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const reached = [...result.stdout.matchAll(/✓ state (\w+)/g)].map((m) => m[1]);
    expect(reached).toEqual(['NORMAL', 'PREPARE', 'EVACUATE', 'HANDOFF_READY', 'TAKEOVER', 'RETURN_HANDOFF_READY', 'CLOSED']);
    expect(result.stdout).toMatch(/── Where to look/);

    const cycle = /cycle (\d{8}T\d{6}Z-[a-z2-7]{6});/.exec(result.stdout)?.[1] ?? '';
    const laptop = join(dir, 'laptop');
    for (const file of ['HANDOFF.md', 'manifest.json', 'return/HANDOFF.md', 'return/manifest.json'])
      expect(existsSync(join(laptop, '.session-handoff', cycle, file))).toBe(true);
    expect(result.stdout).toContain(join(laptop, '.session-handoff', cycle, 'HANDOFF.md'));
    // Both legs' checkpoints are on the bare remote; the user's branch there was never moved.
    const refs = git(join(dir, 'remote.git'), 'for-each-ref', '--format=%(refname)').split('\n');
    expect(refs).toEqual(expect.arrayContaining([`refs/heads/handoff/${cycle}`, `refs/heads/handoff/${cycle}-return`, 'refs/heads/main']));
    expect(readFileSync(join(laptop, 'NOTES.md'), 'utf8')).toMatch(/green/);
    // The demo stops its daemon.
    expect(existsSync(join(dir, 'state', 'daemon.json'))).toBe(false);
  });

  it('its payloads are the project fixtures, unchanged (the demo rewrites paths, times and percents at run time)', () => {
    const pairs = [
      ['claude-statusline.json', 'claude-statusline/subscriber-v2.1.2xx.json'],
      ['codex-rollout.jsonl', 'codex/rollout-2026-08-20T09-00-00-019d0a8b-f6b9-7f61-b6c9-2050a0dbfbcd.jsonl'],
    ];
    for (const [copy, original] of pairs)
      expect(readFileSync(new URL(copy ?? '', PAYLOADS), 'utf8')).toBe(readFileSync(new URL(original ?? '', FIXTURES), 'utf8'));
  });
});
