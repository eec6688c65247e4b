import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, startDaemon, type DaemonProcess } from '../support/daemon.js';
import { tempRepo } from '../support/git.js';

let daemon: DaemonProcess;
beforeAll(async () => {
  daemon = await startDaemon();
});
afterAll(async () => {
  await daemon.stop();
});

describe('handoff list', () => {
  it('shows the latest 20 cycles of a workspace with the total, and every one with --all', async () => {
    const repo = tempRepo();
    const ids = Array.from({ length: 25 }, (_, i) => `20260101T0000${String(i).padStart(2, '0')}Z-abcdef`);
    for (const id of ids) mkdirSync(join(repo, '.session-handoff', id), { recursive: true });
    const latest = await cli(daemon.stateDir, ['list', '--json'], repo);
    const data = latest.json.data as { cycles: { cycle: string }[]; total: number; note?: string };
    expect(data.total).toBe(25);
    expect(data.cycles.map((c) => c.cycle)).toEqual(ids.slice(-20));
    expect(data.note).toMatch(/handoff list --all/);
    const all = await cli(daemon.stateDir, ['list', '--all', '--json'], repo);
    expect((all.json.data as { cycles: unknown[] }).cycles).toHaveLength(25);
  });
});
