import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, rawRequest, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

const CHROMIUM = process.env['HANDOFF_CHROMIUM'] ?? '/usr/bin/chromium';

let daemon: DaemonProcess;
let repo: string;

beforeAll(async () => {
  daemon = await startDaemon();
  repo = tempRepo();
});
afterAll(async () => {
  await daemon.stop();
});

/**
 * `handoff open` with $BROWSER set to a launcher that records what a browser would be given: its argv,
 * its environment and the file it was pointed at (no desktop browser can be started here).
 */
async function openWithRecorder(): Promise<{ argv: string[]; env: string; file: string; stdout: string }> {
  const seen = join(daemon.stateDir, `browser-${Date.now()}`);
  const recorder = join(daemon.stateDir, 'recording-browser.sh');
  writeFileSync(recorder, `#!/bin/sh\nprintf '%s\\0' "$0" "$@" > '${seen}.argv'\nenv > '${seen}.env'\n`, { mode: 0o755 });
  const stdout = await new Promise<string>((resolve) =>
    execFile(process.execPath, [CLI, '--state-dir', daemon.stateDir, 'open'], { cwd: repo, env: { ...process.env, BROWSER: recorder } }, (_e, out) =>
      resolve(out),
    ),
  );
  await until('the launcher ran', async () => (existsSync(`${seen}.env`) ? true : undefined));
  const argv = readFileSync(`${seen}.argv`, 'utf8').split('\0').slice(0, -1);
  return { argv, env: readFileSync(`${seen}.env`, 'utf8'), file: fileURLToPath(argv[1] ?? ''), stdout };
}

const ticketIn = (page: string): string => /ticket=([A-Za-z0-9_-]{43})/.exec(page)?.[1] ?? '';

describe('handoff open hands the one-time link to the browser in a file, never on a command line', () => {
  it('the launcher gets a file URL: neither its argv nor its environment holds the ticket; the file is 0600 in a 0700 dir of the state dir', async () => {
    const { argv, env, file, stdout } = await openWithRecorder();
    expect(stdout).toMatch(/opened the dashboard in your browser/);
    expect(argv).toHaveLength(2);
    expect(argv[1]).toMatch(/^file:\/\//);
    const ticket = ticketIn(readFileSync(file, 'utf8'));
    expect(ticket).toHaveLength(43);
    for (const arg of argv) expect(arg).not.toContain(ticket);
    expect(env).not.toContain(ticket);
    expect(dirname(file)).toBe(join(daemon.stateDir, 'open'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(statSync(file).uid).toBe(process.getuid?.());
    // Short-lived: the file is named by its ticket's expiry, at most 60 s on.
    const expires = Number(/^(\d+)-/.exec(file.slice(dirname(file).length + 1))?.[1]);
    expect(expires - Date.now()).toBeGreaterThan(0);
    expect(expires - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('the ticket in the file works once', async () => {
    const { file } = await openWithRecorder();
    const path = `/dashboard/login?ticket=${ticketIn(readFileSync(file, 'utf8'))}`;
    const headers = { host: `127.0.0.1:${daemon.port}`, 'sec-fetch-site': 'cross-site' };
    expect((await rawRequest(daemon.port, { path, headers })).status).toBe(200);
    const again = await rawRequest(daemon.port, { path, headers });
    expect([again.status, again.body.code]).toEqual([401, 'unauthorized']);
  });

  it.skipIf(!existsSync(CHROMIUM))('a real browser opened on the file lands on the dashboard, signed in', async () => {
    const { argv } = await openWithRecorder();
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      await page.goto(argv[1] ?? '');
      await page.waitForURL(`http://127.0.0.1:${daemon.port}/dashboard/`);
      await expect.poll(() => page.locator('#live').getAttribute('data-live')).toBe('live');
    } finally {
      await browser.close();
    }
  });
});
