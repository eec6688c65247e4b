import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TailState } from '../../../daemon/ingest/codex-tail.js';
import { GeminiTail } from '../../../daemon/ingest/gemini-tail.js';
import { tempDir } from '../../support/git.js';

/** A record as Gemini CLI's file exporter writes it (pretty-printed, a newline after it). */
const record = (name: string) =>
  `${JSON.stringify({ hrTime: [1796171841, 0], attributes: { 'event.name': `gemini_cli.${name}`, 'session.id': 's-1' } }, null, 2)}\n`;

const silent = { info: () => undefined, warn: () => undefined };
const tails: GeminiTail[] = [];
afterEach(async () => {
  await Promise.all(tails.splice(0).map((tail) => tail.close()));
});

/** A tail on one real outfile; `fedWith(text)` settles once a fed payload contains `text`. */
function tailOn(outfile: string, saved: TailState = {}) {
  const fed: string[] = [];
  const waiting: { text: string; done: () => void }[] = [];
  const tail = new GeminiTail({
    outfiles: [{ outfile, repo: '/home/dev/acme-api' }],
    load: () => Promise.resolve(saved),
    save: () => Promise.resolve(),
    log: silent,
    ingest: (payload, repo) => {
      expect(repo).toBe('/home/dev/acme-api');
      fed.push(payload);
      for (const waiter of waiting.filter((w) => payload.includes(w.text))) waiter.done();
      return Promise.resolve();
    },
  });
  tails.push(tail);
  const fedWith = (text: string) =>
    fed.some((payload) => payload.includes(text)) ? Promise.resolve() : new Promise<void>((done) => waiting.push({ text, done }));
  return { tail, fed, fedWith };
}

describe('the Gemini CLI outfile tail', () => {
  it('history that ends inside a record: that record stays history, the next whole record is read', async () => {
    const outfile = join(tempDir('gemini-tail'), 'telemetry.log');
    const b = record('b_history');
    writeFileSync(outfile, record('a_history') + b.slice(0, 40));
    const { tail, fed, fedWith } = tailOn(outfile);
    await tail.start();
    appendFileSync(outfile, b.slice(40) + record('c_new'));
    await fedWith('c_new');
    await tail.idle();
    expect(fed.join('')).not.toMatch(/history/);
    expect(JSON.parse(fed.join('').trim())).toMatchObject({ attributes: { 'event.name': 'gemini_cli.c_new' } });
  });

  it('records written while the daemon was down are read at start, from the saved offset on', async () => {
    const outfile = join(tempDir('gemini-tail'), 'telemetry.log');
    const a = record('a_read_before');
    writeFileSync(outfile, a + record('b_while_down'));
    const { tail, fed } = tailOn(outfile, { [outfile]: { offset: Buffer.byteLength(a) - 1, cwd: null, session_id: null } });
    await tail.start();
    expect(fed.join('')).toMatch(/b_while_down/);
    expect(fed.join('')).not.toMatch(/a_read_before/);
  });

  it('a file started anew (shorter than the offset) is read from its start', async () => {
    const outfile = join(tempDir('gemini-tail'), 'telemetry.log');
    writeFileSync(outfile, record('a_long_history_record') + record('b_long_history_record'));
    const { tail, fed, fedWith } = tailOn(outfile);
    await tail.start();
    writeFileSync(outfile, record('new'));
    await fedWith('gemini_cli.new');
    expect(fed.join('')).not.toMatch(/history/);
  });
});
