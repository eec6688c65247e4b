import { chmodSync, existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../daemon/store/index.js';
import { spawn } from 'node:child_process';
import { CLI, cli, startDaemon } from '../support/daemon.js';
import { tempDir, tempRepo } from '../support/git.js';
import { newFigures, saveFigures, TransitionLog } from './support/figures.js';
import { readJournal } from './support/journal-read.js';
import { Rng, seedFrom } from './support/rng.js';

/*
 * Journal damage. A torn last record — the file cut at any byte of the last line, no newline — is
 * truncated at the record boundary and reported, and every record before it survives byte for byte.
 * Damage anywhere else, the last complete line included (a flipped byte, a record whose checksum is
 * right but whose JSON is not, a record that is not a workspace record, an empty line) stops the
 * daemon with 74, a message that names the line, the command to inspect it and the command that
 * repairs it, and the file exactly as it was: no data is silently dropped.
 * (restart-and-lease.test.ts covers one torn tail and one damaged first line; this sweeps them.)
 */

const SEED = seedFrom('JOURNAL_SEED');
const rng = new Rng(SEED);
const figures = newFigures();
const transitions = new TransitionLog();
const started = Date.now();
let stateDir: string;
let journalPath: string;
let pristine: Buffer;
let lines: Buffer[];
let repo: string;

/**
 * `handoff daemon --json` on the damaged journal: it must exit by itself, quickly, with one Envelope.
 * A daemon that starts instead (damage skipped) is killed and reported, not waited for.
 */
function startOnDamage(): Promise<{ code: number | null; json: { code: string; error?: { message: string; hint: string } }; started: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, '--state-dir', stateDir, 'daemon', '--port', '0', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      let json: { code: string; error?: { message: string; hint: string } } = { code: '' };
      try {
        json = JSON.parse(stdout) as typeof json;
      } catch {
        json = { code: `<no envelope: ${stdout.slice(0, 200)}>` };
      }
      resolve({ code, json, started: signal === 'SIGKILL' });
    });
  });
}

/** Byte offset where line `index` (0-based) starts. */
const offsetOf = (index: number) => lines.slice(0, index).reduce((sum, line) => sum + line.length, 0);

function restore(bytes: Buffer = pristine): void {
  writeFileSync(journalPath, bytes, { mode: 0o600 });
}

beforeAll(async () => {
  stateDir = tempDir('journal');
  chmodSync(stateDir, 0o700);
  journalPath = join(stateDir, 'journal.jsonl');
  repo = tempRepo();
  const daemon = await startDaemon(stateDir);
  try {
    await cli(stateDir, ['prepare', '--json'], repo);
    for (const who of ['a', 'b', 'c']) {
      const got = await cli(stateDir, ['lease', 'acquire', '--as', who, '--json'], repo);
      await cli(stateDir, ['lease', 'release', '--token', String(got.json.data?.['token']), '--json'], repo);
    }
    await cli(stateDir, ['signal', '--json', '--source', 'claude-statusline', '--metric', 'context', '--used-percent', '30'], repo);
  } finally {
    await daemon.stop();
  }
  pristine = readFileSync(journalPath);
  lines = [];
  for (let start = 0; start < pristine.length;) {
    const end = pristine.indexOf(0x0a, start) + 1;
    lines.push(pristine.subarray(start, end));
    start = end;
  }
  transitions.addJournal(journalPath);
});

afterAll(() => {
  figures.extra['seed'] = SEED;
  saveFigures('journal-damage', figures, transitions, (Date.now() - started) / 1000);
});

describe('a torn last record', () => {
  it('cut at every byte of the last line: recovery keeps every earlier record and cuts exactly the torn bytes', async () => {
    const last = lines.length - 1;
    const boundary = offsetOf(last);
    const lastLength = lines[last]?.length ?? 0;
    for (let keep = 0; keep < lastLength; keep += 1) {
      restore(pristine.subarray(0, boundary + keep));
      let reported: { offset: number; bytes: number } | null = null;
      const { journal, records } = await Journal.open(journalPath, { onTornTail: (torn) => (reported = torn) });
      await journal.close();
      figures.runs += 1;
      expect(records).toHaveLength(last);
      expect(readFileSync(journalPath).equals(pristine.subarray(0, boundary)), `kept ${keep} bytes`).toBe(true);
      if (keep === 0) expect(reported).toBeNull();
      else expect(reported).toEqual({ offset: boundary, bytes: keep });
    }
  });

  it('a torn tail of garbage and of zeros (a crashed block), without a newline: the daemon starts, reports it and serves the state before it', async () => {
    const tails = [Buffer.from('0badc0de {"kind":"workspace","ro'), Buffer.alloc(700)];
    const before = pristine.subarray(0, offsetOf(lines.length - 1));
    for (const tail of tails) {
      restore(Buffer.concat([before, tail]));
      const daemon = await startDaemon(stateDir);
      try {
        figures.runs += 1;
        expect(readFileSync(journalPath).equals(before)).toBe(true);
        expect(readFileSync(join(stateDir, 'daemon.log'), 'utf8')).toMatch(/torn last record/);
        const status = await cli(stateDir, ['status', '--json'], repo);
        // The state before the cut record (a 30 % reading that relaxed PREPARE to NORMAL).
        expect(status.json.data).toMatchObject({ state: 'PREPARE', lease: { holder: null, last_token: 3 } });
      } finally {
        await daemon.stop();
      }
      restore();
    }
  });
});

describe('a damaged record before the last', () => {
  const expectStopped74 = async (what: string, line: number) => {
    const damaged = readFileSync(journalPath);
    const result = await startOnDamage();
    figures.runs += 1;
    expect(result.started, `${what}: the daemon started on a damaged journal`).toBe(false);
    expect(result.code, `${what}: ${JSON.stringify(result.json)}`).toBe(74);
    expect(result.json.code).toBe('corrupt_record');
    expect(result.json.error?.message, what).toMatch(new RegExp(`line ${line}\\b`));
    // How to look at it, and that nothing was deleted.
    expect(result.json.error?.hint, what).toMatch(new RegExp(`sed -n '${line}p'`));
    expect(result.json.error?.hint, what).toMatch(/nothing was deleted/);
    expect(result.json.error?.hint, what).toMatch(/handoff journal repair/);
    expect(readFileSync(journalPath).equals(damaged), `${what}: the file changed`).toBe(true);
    expect(existsSync(join(stateDir, 'daemon.json')), `${what}: a daemon.json was left`).toBe(false);
  };

  it('a flipped byte anywhere in a middle record stops the daemon with 74 and the file untouched', { timeout: 300_000 }, async () => {
    for (let i = 0; i < 12; i += 1) {
      const index = rng.int(0, lines.length - 2);
      const at = offsetOf(index) + rng.int(0, (lines[index]?.length ?? 2) - 2);
      const bytes = Buffer.from(pristine);
      bytes[at] = (bytes[at] ?? 0) ^ (1 << rng.int(0, 6));
      restore(bytes);
      await expectStopped74(`byte ${at} flipped in line ${index + 1}`, index + 1);
    }
    restore();
  });

  it('a right checksum over broken JSON, an empty line, and a record that is not a workspace record: 74 each', async () => {
    const framed = (json: string) => Buffer.from(`${crc32(Buffer.from(json)).toString(16).padStart(8, '0')} ${json}\n`);
    const cases: [string, Buffer, number][] = [
      ['a checksummed line that is not JSON', Buffer.concat([...lines.slice(0, 2), framed('{"kind":"workspace",'), ...lines.slice(2)]), 3],
      ['an empty line', Buffer.concat([...lines.slice(0, 1), Buffer.from('\n'), ...lines.slice(1)]), 2],
      ['a foreign record', Buffer.concat([...lines.slice(0, 1), framed('{"kind":"something-else"}'), ...lines.slice(1)]), 2],
    ];
    for (const [what, bytes, line] of cases) {
      restore(bytes);
      const damaged = readFileSync(journalPath);
      const result = await startOnDamage();
      figures.runs += 1;
      expect(result.started, `${what}: the daemon started on a damaged journal`).toBe(false);
      expect(result.code, `${what}: ${JSON.stringify(result.json)}`).toBe(74);
      expect(result.json.code).toBe('corrupt_record');
      expect(result.json.error?.message, what).toMatch(new RegExp(`(line|record) ${line}\\b`));
      expect(result.json.error?.hint, what).toMatch(/inspect/);
      expect(result.json.error?.hint, what).toMatch(/nothing was deleted/);
      expect(readFileSync(journalPath).equals(damaged), `${what}: the file changed`).toBe(true);
    }
    restore();
  });

  it('a complete last line with a bad checksum is damage, not tearing: 74, then `handoff journal repair` keeps what verifies and quarantines the rest', async () => {
    const last = lines.length - 1;
    const damagedLast = Buffer.concat([Buffer.from('00000000 '), lines.at(-1)?.subarray(9) ?? Buffer.alloc(0)]);
    restore(Buffer.concat([pristine.subarray(0, offsetOf(last)), damagedLast]));
    await expectStopped74('a complete last line with a bad checksum', last + 1);
    const repaired = await cli(stateDir, ['journal', 'repair', '--json']);
    expect(repaired.json).toMatchObject({ code: 'journal_repaired', data: { kept: last, damage: { line: last + 1 } } });
    const quarantine = String((repaired.json.data as { quarantine: string }).quarantine);
    expect(readFileSync(quarantine).equals(damagedLast)).toBe(true);
    expect(readFileSync(journalPath).equals(pristine.subarray(0, offsetOf(last)))).toBe(true);
    const daemon = await startDaemon(stateDir);
    try {
      // The state before the quarantined record (a 30 % reading that relaxed PREPARE to NORMAL).
      expect((await cli(stateDir, ['status', '--json'], repo)).json.data).toMatchObject({ state: 'PREPARE', lease: { holder: null, last_token: 3 } });
    } finally {
      await daemon.stop();
    }
    restore();
  });

  it('after the damage is repaired by hand, the daemon starts with every record', async () => {
    restore();
    const daemon = await startDaemon(stateDir);
    try {
      expect(readJournal(journalPath).raw).toHaveLength(lines.length);
      // The last record (a 30 % reading) took PREPARE back to NORMAL.
      expect((await cli(stateDir, ['status', '--json'], repo)).json.data).toMatchObject({ state: 'NORMAL', lease: { last_token: 3 } });
    } finally {
      await daemon.stop();
    }
    truncateSync(journalPath, pristine.length);
  });
});
