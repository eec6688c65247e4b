import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AGENT_CONTEXT_FILE, SessionRecords } from '../../../daemon/agent-context/index.js';
import { tempDir } from '../../support/git.js';

const quiet = pino({ enabled: false });
const record = (stage: string, toolCalls = 0) => ({ stage, told: true, tool_calls: toolCalls, reminded: false });

describe('SessionRecords', () => {
  it('keeps a record per workspace and session, saved atomically and read back after a restart', async () => {
    const dir = tempDir('state');
    const records = await SessionRecords.open(dir, quiet);
    records.set('/repo', 's1', record('PREPARE@a'));
    records.set('/other', 's1', record('EVACUATE@b'));
    await records.save();
    expect(statSync(join(dir, AGENT_CONTEXT_FILE)).mode & 0o777).toBe(0o600);
    const again = await SessionRecords.open(dir, quiet);
    expect(again.get('/repo', 's1')).toEqual(record('PREPARE@a'));
    expect(again.get('/other', 's1')).toEqual(record('EVACUATE@b'));
    expect(again.get('/repo', 's2')).toBeNull();
  });

  it('is bounded: the least recently seen session goes first', async () => {
    const records = await SessionRecords.open(tempDir('state'), quiet, 3);
    for (const s of ['a', 'b', 'c']) records.set('/r', s, record('X'));
    records.set('/r', 'a', record('Y'));
    records.set('/r', 'd', record('X'));
    expect(records.size).toBe(3);
    expect(records.get('/r', 'b')).toBeNull();
    expect(records.get('/r', 'a')).toEqual(record('Y'));
  });

  it('tool call counts are written on flush; forgetting a session is saved too', async () => {
    const dir = tempDir('state');
    const records = await SessionRecords.open(dir, quiet);
    records.set('/r', 's', record('P', 0));
    await records.save();
    records.set('/r', 's', record('P', 7));
    await records.flush();
    expect((await SessionRecords.open(dir, quiet)).get('/r', 's')).toEqual(record('P', 7));
    records.set('/r', 's', null);
    await records.flush();
    expect((await SessionRecords.open(dir, quiet)).get('/r', 's')).toBeNull();
  });

  it('saves that overlap never interleave and the last state wins', async () => {
    const dir = tempDir('state');
    const records = await SessionRecords.open(dir, quiet);
    const saves: Promise<void>[] = [];
    for (let i = 0; i < 20; i += 1) {
      records.set('/r', `s${i}`, record('P', i));
      saves.push(records.save());
    }
    await Promise.all(saves);
    const saved = JSON.parse(readFileSync(join(dir, AGENT_CONTEXT_FILE), 'utf8')) as { sessions: unknown[] };
    expect(saved.sessions).toHaveLength(20);
  });

  it('a damaged file is reported and replaced, never fatal; entries of the wrong shape are skipped', async () => {
    const dir = tempDir('state');
    writeFileSync(
      join(dir, AGENT_CONTEXT_FILE),
      '{"version":1,"sessions":[["/r","s",{"stage":"P","told":true,"tool_calls":-1,"reminded":false}],["/r","t",{"stage":"P","told":true,"tool_calls":2,"reminded":false}]]}',
    );
    const records = await SessionRecords.open(dir, quiet);
    expect(records.size).toBe(1);
    expect(records.get('/r', 't')).toEqual(record('P', 2));
    writeFileSync(join(dir, AGENT_CONTEXT_FILE), '{"version":1,"sess');
    const lines: string[] = [];
    const log = pino({}, { write: (line: string) => void lines.push(line) });
    const fresh = await SessionRecords.open(dir, log);
    expect(fresh.size).toBe(0);
    expect(lines.join('')).toMatch(/agent context file is unreadable/);
    fresh.set('/r', 's', record('P'));
    await fresh.save();
    expect((await SessionRecords.open(dir, quiet)).get('/r', 's')).toEqual(record('P'));
  });
});
