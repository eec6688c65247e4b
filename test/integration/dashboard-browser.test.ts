import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { git, tempRepo } from '../support/git.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
const CHROMIUM = process.env['HANDOFF_CHROMIUM'] ?? '/usr/bin/chromium';
/** Screenshots land here (ignored by git): look at them after a run. */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-results/dashboard/', import.meta.url));
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

// In CI the browser must be there; on a developer machine without it the test says so and skips.
const available = existsSync(CHROMIUM);
if (!available && process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);

let daemon: DaemonProcess;
let browser: Browser;
let repo: string;

const signal = (percent: number, metric = 'five_hour') =>
  cli(
    daemon.stateDir,
    [
      'signal',
      '--source',
      'claude-statusline',
      '--metric',
      metric,
      '--used-percent',
      String(percent),
      '--resets-at',
      String(Math.floor(Date.now() / 1000) + 3 * 3600),
      '--json',
    ],
    repo,
  );

async function link(): Promise<string> {
  const open = await cli(daemon.stateDir, ['open', '--no-browser', '--json'], repo);
  return String(open.json.data?.['url']);
}

/** Opens a one-time link and waits for the page it moves on to (the login answers with a page of its origin, not a redirect). */
async function signIn(page: Page, url?: string): Promise<void> {
  await page.goto(url ?? (await link()));
  await page.waitForURL(`http://127.0.0.1:${daemon.port}/dashboard/`);
}

describe.skipIf(!available)('the dashboard in headless Chromium (acceptance 1 and 2)', () => {
  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    daemon = await startDaemon();
    repo = tempRepo();
    // A quarter of an hour of history, oldest first (a reading older than one on record is refused).
    const resets = Math.floor(Date.now() / 1000) + 3 * 3600;
    const history: [number, string, number][] = [
      [9, 'five_hour', 52],
      [9, 'context', 22],
      [7, 'five_hour', 61],
      [6, 'context', 30],
      [5, 'five_hour', 68],
      [3, 'context', 41],
      [2, 'five_hour', 74],
    ];
    for (const [minutesAgo, metric, used_percent] of history) {
      const observed_at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
      const answer = await api(daemon, 'POST', '/v1/signals', { repo, source: 'claude-statusline', metric, used_percent, resets_at: resets, observed_at });
      expect(answer.body.code).toBe('reading_recorded');
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
  });

  it('loads through the one-time link and follows a reading to PREPARE without a reload; the chart draws the 80 and 90 lines', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => void (message.type() === 'error' && problems.push(message.text())));
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => void (frame === page.mainFrame() && navigations.push(frame.url())));

    await signIn(page);
    const card = page.locator(`article[data-root="${repo}"]`);
    await expect.poll(() => card.getAttribute('data-state')).toBe('NORMAL');
    await expect.poll(() => page.locator('#live').getAttribute('data-live')).toBe('live');
    const loads = navigations.length;
    await page.evaluate(() => Object.assign(globalThis, { __sameDocument: true }));

    await signal(84);
    await expect.poll(() => card.getAttribute('data-state'), { timeout: 10_000 }).toBe('PREPARE');
    expect(await card.locator('[data-testid=state]').textContent()).toBe('PREPARE');
    expect(await card.locator('.headline').textContent()).toMatch(/five_hour at 84 %/);
    // The same document: no navigation, the marker set before the change is still there.
    expect(navigations.length).toBe(loads);
    expect(await page.evaluate(() => (globalThis as { __sameDocument?: boolean }).__sameDocument)).toBe(true);

    for (const line of ['80', '90']) await expect.poll(() => card.locator(`svg.chart line[data-line="${line}"]`).count()).toBe(1);
    expect(await card.locator('svg.chart .threshold-label').allTextContents()).toEqual(['80 % PREPARE', '90 % EVACUATE']);
    expect(await card.locator('svg.chart path.series[data-series="claude-statusline/five_hour/-"]').count()).toBe(1);
    expect(await card.locator('svg.chart circle').count()).toBe(8);

    const shot = `${OUTPUT_DIR}prepare.png`;
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows a cycle’s HANDOFF.md as text, whatever the agent wrote, and a blocked drain in plain words', async () => {
    const ready = tempRepo();
    const capsule = join(ready, 'capsule.json');
    writeFileSync(
      capsule,
      JSON.stringify({
        objective: 'Fix <img src=x onerror="document.title=\'pwned\'"> the parser',
        next_action: 'Run <script>document.title="pwned"</script> the tests',
      }),
    );
    await cli(daemon.stateDir, ['capsule', 'set', '--file', capsule, '--json'], ready);
    const now = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], ready);
    expect(now.json.code).toBe('handoff_ready');
    const cycle = String((now.json.data?.['cycle'] as { id: string }).id);

    const stuck = tempRepo();
    git(stuck, 'remote', 'add', 'origin', join(stuck, 'no-such-remote.git'));
    writeFileSync(join(stuck, 'work.txt'), 'unsaved\n');
    const blocked = await cli(daemon.stateDir, ['now', '--no-wait', '--json'], stuck);
    expect(blocked.json.code).toBe('drain_blocked');

    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    await signIn(page);
    const stuckCard = page.locator(`article[data-root="${stuck}"]`);
    await expect.poll(() => stuckCard.getAttribute('data-state')).toBe('EVACUATE');
    expect(await stuckCard.locator('p.blocked').textContent()).toMatch(
      /^The evacuation stopped at “push the handoff branch, the package and the lease offer at once, and check the remote has them” \(publish\): .+Nothing of yours was changed\./,
    );
    expect(await stuckCard.locator('.step.blocked').textContent()).toMatch(/publish/);

    const card = page.locator(`article[data-root="${ready}"]`);
    await card.locator(`button[data-cycle="${cycle}"]`).click();
    const doc = card.locator('details[open] .handoff-md');
    await expect.poll(() => doc.locator('h1').textContent()).toBe(`Handoff ${cycle} (out leg, revision 1)`);
    expect(await doc.textContent()).toContain('Run <script>document.title="pwned"</script> the tests');
    expect(await doc.textContent()).toContain('Fix <img src=x onerror=');
    expect(await doc.locator('script, img').count()).toBe(0);
    expect(await page.title()).toBe('session-handoff');
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${OUTPUT_DIR}cycle-and-blocked.png`, fullPage: true });
    await context.close();
  });

  it('at phone width, in the reader’s locale: the most urgent workspace first, a summary strip, stage markers, nothing wider than the screen', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'de-DE', deviceScaleFactor: 1 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await signIn(page);
    await expect.poll(() => page.locator('article.card').count()).toBeGreaterThanOrEqual(3);
    const shown = await page.locator('article.card').evaluateAll((cards) => cards.map((c) => [c.getAttribute('data-root'), c.getAttribute('data-state')]));
    // The stopped drain first, then the work on offer, then pressure building: what needs a person.
    expect(shown.map(([, state]) => state)).toEqual(['EVACUATE', 'HANDOFF_READY', 'PREPARE']);
    const overview = await page.evaluate(async () =>
      ((await (await fetch('/dashboard/api/overview')).json()) as { data: { workspaces: { root: string }[] } }).data.workspaces.map((w) => w.root),
    );
    expect(shown.map(([root]) => root)).toEqual(overview);

    const strip = page.locator('#summary');
    expect(await strip.locator('[data-summary]').allTextContents()).toEqual([
      '1 stopped',
      '1 on offer',
      '1 preparing',
      expect.stringMatching(/^worst: 84 % five_hour in /),
    ]);

    const first = page.locator('article.card').first();
    expect(await first.locator('svg.chart line.stage-mark[data-stage="EVACUATE"]').count()).toBe(1);
    const preparing = page.locator(`article[data-root="${repo}"]`);
    expect(await preparing.locator('svg.chart line.stage-mark[data-stage="PREPARE"]').count()).toBe(1);
    // A stopped step says how long it ran, in the CLI's words, not how long ago it stopped.
    expect(await first.locator('.step.blocked').textContent()).toMatch(/publish stopped after \d+ s$/);
    // Reset times in the reader's locale (de-DE: day.month.year), with the time left in words.
    expect(await preparing.locator('table.readings td .moment').first().textContent()).toMatch(/^in 2 h( \d+ min)? \(\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}\)$/);

    // In the page (the test's types have no DOM): the page's width, and any element that reaches past it.
    const overflow = (await page.evaluate(`(() => {
      const width = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > width + 1 && !el.closest('pre'));
      return { scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 5).map((el) => el.tagName + '.' + el.className) };
    })()`)) as { scroll: number; width: number; wide: string[] };
    expect(overflow).toEqual({ scroll: overflow.width, width: 390, wide: [] });
    const shot = `${OUTPUT_DIR}phone.png`;
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the cookie is the page’s alone: another browser, another host name or a reused link gets nothing', async () => {
    const url = await link();
    const signedIn = await browser.newContext();
    const page = await signedIn.newPage();
    await signIn(page, url);
    const cookies = await signedIn.cookies();
    expect(cookies).toEqual([
      expect.objectContaining({ name: `handoff_dashboard_${daemon.port}`, domain: '127.0.0.1', path: '/dashboard', httpOnly: true, sameSite: 'Strict' }),
    ]);
    // localhost is another origin: the cookie is not sent there.
    const elsewhere = await page.goto(`http://localhost:${daemon.port}/dashboard/`);
    expect(elsewhere?.status()).toBe(401);

    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    expect((await strangerPage.goto(`http://127.0.0.1:${daemon.port}/dashboard/`))?.status()).toBe(401);
    // The link was spent by the first browser.
    expect((await strangerPage.goto(url))?.status()).toBe(401);
    await stranger.close();
    await signedIn.close();
  });

  it('a page on another local port cannot read the dashboard, even from the signed-in browser', async () => {
    const signedIn = await browser.newContext();
    const page = await signedIn.newPage();
    await signIn(page);
    const target = `http://127.0.0.1:${daemon.port}`;
    const hostile: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const seen: number[] = [];
      page.on('response', (response) => void (response.url().startsWith(`${target}/dashboard/api/`) && seen.push(response.status())));
      await page.goto(`http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`);
      const outcome = await page.evaluate(async (url) => {
        const read = async (mode: 'cors' | 'no-cors') => {
          try {
            const response = await fetch(`${url}/dashboard/api/overview`, { credentials: 'include', mode });
            return `${response.type} ${response.status}`;
          } catch (error) {
            return `blocked: ${(error as Error).name}`;
          }
        };
        return [await read('cors'), await read('no-cors')];
      }, target);
      // A CORS read fails in the browser; a no-cors one gets an opaque answer it cannot look into.
      expect(outcome).toEqual(['blocked: TypeError', 'opaque 0']);
      // And the daemon itself refused it (403, not the 401 of a missing cookie): another port of
      // 127.0.0.1 is the same *site*, so the strict cookie travels with a no-cors GET, which carries no
      // Origin — the Sec-Fetch-Site rule is what stops it. (The CORS read gets no answer event:
      // Chromium fails it on the refused response.)
      await expect.poll(() => seen).toEqual([403]);
    } finally {
      await new Promise((resolve) => hostile.close(resolve));
      await signedIn.close();
    }
  });
});
