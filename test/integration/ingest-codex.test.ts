import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startDaemon, until, type DaemonProcess } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { codexModelTokenCount, codexSessionMeta, codexTokenCount } from './ingest-support.js';

interface Status {
  state: string;
  readings: {
    metric: string;
    used_percent: number;
    source: string;
    executor: string | null;
    observed_at: string;
    credible: boolean;
    limit?: { id: string; name: string | null };
    not_credible: string | null;
  }[];
  daemon: { codex_tail: { state: string; codex_home: string } | null };
}

async function status(daemon: DaemonProcess, repo: string): Promise<Status> {
  return (await cli(daemon.stateDir, ['status', '--json'], repo)).json.data as unknown as Status;
}

const stateBecomes = (daemon: DaemonProcess, repo: string, state: string) =>
  until(`state ${state}`, async () => ((await status(daemon, repo)).state === state ? true : undefined));

/** Whether the journal holds `text` yet: readings that move nothing are written coalesced. */
const journalHas = (stateDir: string, text: string) => readFileSync(join(stateDir, 'journal.jsonl'), 'utf8').includes(text);

/** A CODEX_HOME with the dated sessions directory Codex writes into. */
function codexHome(): { home: string; day: string } {
  const home = tempDir('codex');
  const day = join(home, 'sessions', '2026', '11', '29');
  mkdirSync(day, { recursive: true });
  return { home, day };
}

describe('the Codex rollout tail', () => {
  it('lines appended one by one move the state; a partial last line waits for its end; a restart replays nothing', async () => {
    const repo = tempRepo();
    const { home, day } = codexHome();
    const stateDir = tempDir('state');
    const session = '019d0a8b-tail-test';
    const file = join(day, 'rollout-2026-11-29T09-00-00-tail.jsonl');
    let daemon = await startDaemon(stateDir, { CODEX_HOME: home });
    try {
      // A file that appears after the daemon started is read from its first line.
      writeFileSync(file, `${codexSessionMeta(repo, session)}\n`);
      appendFileSync(file, `${codexTokenCount(40, 20)}\n`);
      await until('the first reading', async () => ((await status(daemon, repo)).readings.length > 0 ? true : undefined));
      expect((await status(daemon, repo)).state).toBe('NORMAL');

      appendFileSync(file, `${codexTokenCount(84, 20)}\n`);
      await stateBecomes(daemon, repo, 'PREPARE');

      // The writer is caught mid-line: a fragment read as a line would be refused and lose the 93 %.
      const line = codexTokenCount(93, 20);
      appendFileSync(file, line.slice(0, 40));
      appendFileSync(file, `${line.slice(40)}\n`);
      await stateBecomes(daemon, repo, 'EVACUATE');
      const after = await status(daemon, repo);
      expect(after.readings.find((r) => r.metric === 'five_hour')).toMatchObject({ used_percent: 93, source: 'codex-rollout', executor: session });

      await daemon.stop();
      daemon = await startDaemon(stateDir, { CODEX_HOME: home });
      // Nothing was read again from old lines: the readings are the very ones recorded before.
      expect((await status(daemon, repo)).readings).toEqual(after.readings.map((r) => ({ ...r, age_seconds: expect.any(Number) as number })));

      // The next line after the restart is read, routed by the session_meta cwd seen before the restart.
      appendFileSync(file, `${codexTokenCount(93, 61)}\n`);
      await until('the weekly reading after the restart', async () =>
        (await status(daemon, repo)).readings.some((r) => r.metric === 'weekly' && r.used_percent === 61) ? true : undefined,
      );
      await until('the weekly reading in the journal', async () => (journalHas(stateDir, '"used_percent":61') ? true : undefined));
    } finally {
      await daemon.stop();
    }
  });

  it('lines written while the daemon was down are read at its start; history of an unknown file is not', async () => {
    const { home, day } = codexHome();
    const stateDir = tempDir('state');
    const repo = tempRepo();
    const old = tempRepo();
    // A rollout that was there before the daemon ever ran: history, not live telemetry.
    writeFileSync(join(day, 'rollout-old.jsonl'), `${codexSessionMeta(old, 'old-session')}\n${codexTokenCount(95, 95)}\n`);
    const file = join(day, 'rollout-live.jsonl');
    let daemon = await startDaemon(stateDir, { CODEX_HOME: home });
    try {
      writeFileSync(file, `${codexSessionMeta(repo, 'live-session')}\n${codexTokenCount(10, 10)}\n`);
      await until('the live reading', async () => ((await status(daemon, repo)).readings.length > 0 ? true : undefined));
      await daemon.stop();
      appendFileSync(file, `${codexTokenCount(91, 10)}\n`);
      daemon = await startDaemon(stateDir, { CODEX_HOME: home });
      await stateBecomes(daemon, repo, 'EVACUATE');
      // The old file's 95 % was never read; a line appended to it now is.
      expect(await status(daemon, old)).toMatchObject({ state: 'NORMAL', readings: [] });
      appendFileSync(join(day, 'rollout-old.jsonl'), `${codexTokenCount(82, 30)}\n`);
      await stateBecomes(daemon, old, 'PREPARE');
    } finally {
      await daemon.stop();
    }
  });

  it('a sessions directory Codex creates after the daemon started is watched too', async () => {
    const home = tempDir('codex');
    const repo = tempRepo();
    const daemon = await startDaemon(undefined, { CODEX_HOME: home });
    try {
      const day = join(home, 'sessions', '2026', '11', '30');
      mkdirSync(day, { recursive: true });
      writeFileSync(join(day, 'rollout-new.jsonl'), `${codexSessionMeta(repo, 'new-session')}\n${codexTokenCount(86, 10)}\n`);
      await stateBecomes(daemon, repo, 'PREPARE');
    } finally {
      await daemon.stop();
    }
  });

  it('a batch with a bad line in the middle and session_meta first: every good line counts', async () => {
    const repo = tempRepo();
    const { home, day } = codexHome();
    const daemon = await startDaemon(undefined, { CODEX_HOME: home });
    try {
      // One write, so the tail sends it as one batch.
      writeFileSync(
        join(day, 'rollout-bad-middle.jsonl'),
        [
          codexSessionMeta(repo, 'bad-middle'),
          codexTokenCount(40, 20),
          '{"timestamp": "2026-11-29T10:00:00Z", "type": "event_msg", "payload": {"type": "token_count", "rate_limits": ',
          JSON.stringify({ timestamp: 'yesterday', type: 'event_msg', payload: { type: 'token_count', rate_limits: null } }),
          codexTokenCount(41, 86),
          '',
        ].join('\n'),
      );
      await stateBecomes(daemon, repo, 'PREPARE');
      const weekly = (await status(daemon, repo)).readings.find((r) => r.metric === 'weekly');
      expect(weekly).toMatchObject({ used_percent: 86, executor: 'bad-middle' });
      // The route came from the first line and stays the file's: a later line still lands here.
      appendFileSync(join(day, 'rollout-bad-middle.jsonl'), `${codexTokenCount(93, 86)}\n`);
      await stateBecomes(daemon, repo, 'EVACUATE');
    } finally {
      await daemon.stop();
    }
  });

  it('limit families, in one file and across files: pressure follows the account; the Spark family is shown and moves nothing', async () => {
    const repo = tempRepo();
    const { home, day } = codexHome();
    const daemon = await startDaemon(undefined, { CODEX_HOME: home });
    try {
      const one = join(day, 'rollout-families-one.jsonl');
      writeFileSync(one, `${codexSessionMeta(repo, 'families-one')}\n${codexTokenCount(30, 84)}\n`);
      await stateBecomes(daemon, repo, 'PREPARE');
      // The model's own 3 % comes last in the file: it must not replace the account's 84 %.
      appendFileSync(one, `${codexModelTokenCount(3)}\n`);
      await until('the Spark reading', async () => ((await status(daemon, repo)).readings.some((r) => r.limit?.id === 'codex_bengalfox') ? true : undefined));
      let now = await status(daemon, repo);
      expect(now.state).toBe('PREPARE');
      expect(now.readings.find((r) => r.metric === 'weekly' && r.limit === undefined)).toMatchObject({ used_percent: 84, credible: true });
      expect(now.readings.find((r) => r.limit?.id === 'codex_bengalfox')).toMatchObject({
        used_percent: 3,
        credible: false,
        limit: { name: 'GPT-5.3-Codex-Spark' },
        not_credible: expect.stringMatching(/per-model limit family GPT-5\.3-Codex-Spark/) as string,
      });
      // Another session's file: its Spark family at 97 % does not evacuate; the account's line does.
      const two = join(day, 'rollout-families-two.jsonl');
      writeFileSync(two, `${codexSessionMeta(repo, 'families-two')}\n${codexModelTokenCount(97)}\n`);
      await until('the second Spark reading', async () =>
        (await status(daemon, repo)).readings.some((r) => r.limit !== undefined && r.used_percent === 97) ? true : undefined,
      );
      now = await status(daemon, repo);
      expect(now.state).toBe('PREPARE');
      const human = await cli(daemon.stateDir, ['status'], repo);
      expect(human.stdout).toMatch(/weekly GPT-5\.3-Codex-Spark/);
      appendFileSync(two, `${codexTokenCount(30, 92)}\n`);
      await stateBecomes(daemon, repo, 'EVACUATE');
    } finally {
      await daemon.stop();
    }
  });

  it('CODEX_HOME created after the daemon started: the tail waits for it, then reads the next rollout line', async () => {
    const repo = tempRepo();
    const home = join(tempDir('codex-parent'), '.codex');
    const daemon = await startDaemon(undefined, { CODEX_HOME: home });
    try {
      expect((await status(daemon, repo)).daemon.codex_tail).toMatchObject({ state: 'waiting', codex_home: home });
      // A person without Codex is not told about its tail; the JSON status still says it waits.
      expect((await cli(daemon.stateDir, ['status'], repo)).stdout).not.toMatch(/codex\s+tail/);
      const day = join(home, 'sessions', '2026', '11', '30');
      mkdirSync(day, { recursive: true });
      await until('the tail to start', async () => ((await status(daemon, repo)).daemon.codex_tail?.state === 'on' ? true : undefined));
      const file = join(day, 'rollout-late-home.jsonl');
      writeFileSync(file, `${codexSessionMeta(repo, 'late-home')}\n`);
      appendFileSync(file, `${codexTokenCount(88, 10)}\n`);
      await stateBecomes(daemon, repo, 'PREPARE');
    } finally {
      await daemon.stop();
    }
  });
});
