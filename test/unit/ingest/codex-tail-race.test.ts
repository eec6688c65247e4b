import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CodexTail, type ChunkRoute } from '../../../daemon/ingest/codex-tail.js';
import { tempDir } from '../../support/git.js';

const SESSION_META = JSON.stringify({
  timestamp: '2026-12-02T00:00:00.000Z',
  type: 'session_meta',
  payload: { id: 'race-session', cwd: '/home/dev/acme-api' },
});
const TOKEN_COUNT = JSON.stringify({
  timestamp: '2026-12-02T00:00:01.000Z',
  type: 'event_msg',
  payload: { type: 'token_count', info: null, rate_limits: { primary: { used_percent: 83, window_minutes: 300, resets_at: 1796200000 }, secondary: null } },
});
const ROLLOUT = `${SESSION_META}\n${TOKEN_COUNT}\n`;

const silent = { info: () => undefined, warn: () => undefined };
const tails: CodexTail[] = [];
afterEach(async () => {
  await Promise.all(tails.splice(0).map((tail) => tail.close()));
});

/**
 * A tail on a real CODEX_HOME whose scan of `openAt` is held open between its listing and the handling
 * of the entries, while `write` creates directories and a rollout there: what Codex does at the moment a
 * fresh CODEX_HOME or a new day begins.
 */
function raceTail(home: string, openAt: string, write: () => void) {
  const fed: { payload: string; route: ChunkRoute }[] = [];
  let fedRollout: () => void = () => undefined;
  const rolloutFed = new Promise<void>((resolve) => (fedRollout = resolve));
  let opened = false;
  const tail = new CodexTail({
    codexHome: home,
    load: () => Promise.resolve({}),
    save: () => Promise.resolve(),
    now: () => new Date('2026-12-02T00:00:02Z'),
    log: silent,
    ingest: (payload, route) => {
      fed.push({ payload, route });
      if (payload.includes('"token_count"')) fedRollout();
      return Promise.resolve({ skipped: [] });
    },
    afterListing: (dir) => {
      if (dir === openAt && !opened) {
        opened = true;
        write();
      }
      return Promise.resolve();
    },
  });
  tails.push(tail);
  return { tail, fed, rolloutFed };
}

describe('the Codex tail and directories created while it lists', () => {
  it('a fresh CODEX_HOME: the day directory and its rollout appear right after `sessions` was listed; the rollout is read from its first line', async () => {
    const home = tempDir('codex-race');
    mkdirSync(join(home, 'sessions'));
    const day = join(home, 'sessions', '2026', '12', '02');
    const { tail, fed, rolloutFed } = raceTail(home, join(home, 'sessions'), () => {
      mkdirSync(day, { recursive: true });
      writeFileSync(join(day, 'rollout-2026-12-02T00-00-00-race.jsonl'), ROLLOUT);
    });
    await tail.start();
    await rolloutFed;
    await tail.idle();
    expect(fed.map((f) => f.payload).join('')).toBe(ROLLOUT);
    expect(fed[0]?.route).toEqual({ cwd: '/home/dev/acme-api', session_id: 'race-session' });
    expect(tail.status()).toMatchObject({ state: 'on', tailed_files: 1, watched_dirs: 5 });
  });

  it('a new day: its directory appears right after the month was listed (the daemon running since the day before)', async () => {
    const home = tempDir('codex-race');
    const month = join(home, 'sessions', '2026', '12');
    mkdirSync(join(month, '01'), { recursive: true });
    const { tail, fed, rolloutFed } = raceTail(home, month, () => {
      mkdirSync(join(month, '02'));
      writeFileSync(join(month, '02', 'rollout-2026-12-02T00-00-00-race.jsonl'), ROLLOUT);
    });
    await tail.start();
    await rolloutFed;
    await tail.idle();
    expect(fed.map((f) => f.payload).join('')).toBe(ROLLOUT);
    expect(tail.status()).toMatchObject({ tailed_files: 1, watched_dirs: 6 });
  });
});
