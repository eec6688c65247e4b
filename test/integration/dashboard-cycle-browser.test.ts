import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { twoClones } from '../support/scenario.js';

/** Screenshots land beside dashboard-browser.test.ts's (ignored by git). */
const OUTPUT_DIR = fileURLToPath(new URL('../../test-results/dashboard/', import.meta.url));
const CHROMIUM = process.env['HANDOFF_CHROMIUM'] ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);

let daemon: DaemonProcess;
let browser: Browser;
const run = (args: string[], cwd: string) => cli(daemon.stateDir, [...args, '--json'], cwd);
const stateOf = async (repo: string) => String((await run(['status'], repo)).json.data?.['state']);

interface Box {
  readonly text: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe.skipIf(!available)('the dashboard through one whole cycle, without a reload (issue 32, 7)', () => {
  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    daemon = await startDaemon();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
  });

  it('names the cycle under way in its Cycles list, keeps stage names apart, drops "receiving" after CLOSED, and sorts the primary above the empty receiver', async () => {
    const { a, b } = twoClones();
    // Both checkouts are workspaces of the daemon before the page opens.
    await run(['status'], b);
    await run(['signal', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '10', '--executor', 'session-1'], a);
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 1400 } })).newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(String((await run(['open', '--no-browser'], a)).json.data?.['url']));
    const cardA = page.locator(`article[data-root="${a}"]`);
    const cardB = page.locator(`article[data-root="${b}"]`);
    await expect.poll(() => cardB.count()).toBe(1);

    // PREPARE, then EVACUATE seconds later: the agent was seen, so the drain waits for `handoff drained`.
    await run(['signal', '--source', 'claude-statusline', '--metric', 'five_hour', '--used-percent', '84', '--executor', 'session-1'], a);
    writeFileSync(join(a, 'f.txt'), 'work\n');
    const now = run(['now', '--reason', 'battery'], a);
    await until('EVACUATE', async () => ((await stateOf(a)) === 'EVACUATE' ? true : undefined));
    const cycle = ((await run(['status'], a)).json.data?.['cycle'] as { id: string }).id;
    await expect.poll(() => cardA.getAttribute('data-state')).toBe('EVACUATE');
    expect(await cardA.locator('dd[data-fact=cycle]').textContent()).toContain(cycle);
    expect(await cardA.locator('.cycles').textContent()).not.toContain('no cycle recorded yet');
    expect(await cardA.locator(`[data-cycle-pending="${cycle}"]`).textContent()).toMatch(/under way/);

    expect((await run(['drained'], a)).code).toBe(0);
    expect((await now).json.code).toBe('handoff_ready');
    await expect.poll(() => cardA.getAttribute('data-state')).toBe('HANDOFF_READY');
    await expect.poll(() => cardA.locator(`button[data-cycle="${cycle}"]`).count()).toBe(1);
    // PREPARE, EVACUATE and READY began seconds apart on a chart minutes wide: their names must not print over each other, nor over the lines' labels.
    const labels = await cardA.locator('svg.chart text.stage-label, svg.chart text.threshold-label').evaluateAll((nodes) =>
      nodes.map((node) => {
        const box = (node as unknown as { getBBox(): Box }).getBBox();
        return { text: node.textContent ?? '', x: box.x, y: box.y, width: box.width, height: box.height };
      }),
    );
    expect(labels.map((l) => l.text)).toEqual(['80 % PREPARE', '90 % EVACUATE', 'PREPARE', 'EVACUATE', 'READY']);
    for (const [i, one] of labels.entries()) for (const other of labels.slice(i + 1)) expect(overlap(one, other), `${one.text} over ${other.text}`).toBe(false);
    await cardA.screenshot({ path: `${OUTPUT_DIR}stage-labels.png` });

    expect((await run(['accept', cycle, '--as', 'emergency', '--checkout'], b)).json.code).toBe('accepted');
    await expect.poll(() => cardB.locator('dd[data-fact=receiving]').count()).toBe(1);
    writeFileSync(join(b, 'f.txt'), 'work, finished by B\n');
    expect((await run(['return', '--no-wait'], b)).json.code).toBe('handoff_ready');
    expect((await run(['accept', cycle, '--return', '--as', 'primary', '--checkout'], a)).json).toMatchObject({ code: 'accepted', data: { state: 'CLOSED' } });
    await expect.poll(() => cardA.getAttribute('data-state')).toBe('CLOSED');
    // The receiver's card follows without a reload, and the primary's card comes first.
    await expect.poll(() => cardB.locator('dd[data-fact=receiving]').count(), { timeout: 10_000 }).toBe(0);
    const order = await page.locator('article.card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-root')));
    expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
    await page.screenshot({ path: `${OUTPUT_DIR}closed-cycle.png`, fullPage: true });
    expect(problems).toEqual([]);
  });
});
