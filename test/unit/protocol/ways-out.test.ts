import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODES, stateOf, statusView, type NextStep, type WorkspaceSnapshot } from '../../../protocol/index.js';
import { Harness, historyArb, PAUSE as pause, VERIFIED as verified, walk } from './machine-harness.js';

function ways(h: Harness) {
  const view = statusView(h.snapshot, h.at);
  return { situation: view.situation, verbs: view.next.map((n) => n.verb), next: view.next };
}

function taken() {
  const h = new Harness();
  h.send({ type: 'LEASE_ACQUIRE', executor: 'primary' });
  h.send({ type: 'NOW', reason: null, wait: true });
  h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: null });
  h.send({ type: 'HANDOFF_ACCEPTED', executor: 'emergency', receiver_root: '/clone', token: null });
  return h;
}

describe('the ways out status offers (docs/concepts.md, "Ways out")', () => {
  it('a blocked evacuation: resume first, cancel as the way out; paused: unpause first, cancel still offered', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'DRAIN_BLOCKED', reason: 'push rejected', step: 'publish' });
    expect(ways(h)).toMatchObject({ situation: 'EVACUATE (blocked)', verbs: ['resume', 'cancel'] });
    h.send({ type: 'PAUSE_SET', scope: 'workspace', pause });
    expect(ways(h)).toMatchObject({ situation: 'paused', verbs: ['unpause', 'cancel'] });
  });

  it('an offer that travels through a remote is offered for cancelling (withdrawn on the remote first)', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
    expect(ways(h)).toMatchObject({ situation: 'HANDOFF_READY', verbs: ['accept', 'cancel'] });
  });

  it('a lease taken on another machine: this checkout waits for it, or breaks it if that machine is gone', () => {
    const h = new Harness();
    h.send({ type: 'NOW', reason: null, wait: false });
    h.send({ type: 'CHECKPOINT_VERIFIED', checkpoint: verified, remote: { name: 'origin', lease_head: 'abc' } });
    const cycle = h.context.cycle?.id ?? '';
    const manifest = { path: 'manifest.json', sha256: 'a'.repeat(64) };
    const lease = {
      schema_version: 1 as const,
      cycle,
      state: 'taken' as const,
      holder: { executor: 'laptop-b', token: 1 },
      last_token: 1,
      manifest,
      at: '2026-08-20T10:00:00.000Z',
    };
    expect(h.send({ type: 'REMOTE_LEASE', lease, lease_head: 'def', return_drain: null }).changed).toBe(true);
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (held)', verbs: ['wait', 'lease break'] });
  });

  it('a return leg whose lease moved: fenced out until the new holder returns, with its token', () => {
    const h = taken();
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (held)', verbs: ['return', 'lease break'] });
    expect(ways(h).next[0]).toMatchObject({ command: 'handoff return --token 2', repo: '/clone' });
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'LEASE_BREAK', reason: 'the receiver is gone' });
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (return fenced out)', verbs: ['lease acquire', 'cancel'] });
    h.send({ type: 'LEASE_ACQUIRE', executor: 'rescuer' });
    expect(ways(h)).toMatchObject({ situation: 'TAKEOVER (return fenced out)', verbs: ['return', 'cancel'] });
    expect(ways(h).next[0]?.command).toBe('handoff return --token 3');
    h.send({ type: 'RETURN_START', token: 3, wait: false });
    expect(ways(h).situation).toBe('TAKEOVER (returning)');
  });

  it('a one-way cycle closes first; an emergency-return one offers close only after a cancelled return', () => {
    const h = taken();
    h.send({ type: 'RETURN_START', token: 2, wait: false });
    h.send({ type: 'CANCEL', reason: null });
    expect(ways(h).verbs).toEqual(['return', 'close --one-way', 'lease break']);
  });
});

/** docs/concepts.md's "Ways out" table: the commands documented from each situation. */
const documentedWays = (() => {
  const doc = readFileSync(new URL('../../../docs/concepts.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([^`]+)`(?: \(any state\))? \| (`handoff [^`]+`|\(wait\)) \|/gm)];
  const ways = new Map<string, Set<string>>();
  for (const [, where = '', command = ''] of rows) ways.set(where, (ways.get(where) ?? new Set()).add(command));
  // Every situation has a row: a table this no longer parses must fail here, not pass vacuously.
  if (ways.size !== 15) throw new Error(`docs/concepts.md: ${ways.size} situations in the "Ways out" table, 15 expected`);
  return ways;
})();

/** A way out as the table writes it, and whether the step's command and sentence say the same. */
function checkWay(situation: string, way: NextStep) {
  const documented = way.verb === 'wait' ? '(wait)' : `\`handoff ${way.verb}\``;
  expect([...(documentedWays.get(situation) ?? [])], `${situation} offers ${documented}`).toContain(documented);
  if (way.command === null) {
    expect(way.verb).toBe('wait');
    expect(way.why).toMatch(/^wait: /);
  } else {
    // The command line is the verb's, with its arguments; its sentence names the command to type.
    for (const word of way.verb.split(' ')) expect(way.command.split(' ')).toContain(word);
    expect(way.why).toContain(`handoff ${way.verb.split(' ')[0] ?? ''}`);
  }
}

/** The context without what every event restamps. */
const settledOf = (snapshot: WorkspaceSnapshot) => JSON.stringify({ ...snapshot.context, now: 0, entropy: '', outcome: null });

describe('every machine verb does what it answers', () => {
  it('a refusal (an error code) changes nothing; an answer that changed nothing leaves the state as it was; from every state status offers a way on', () => {
    fc.assert(
      fc.property(historyArb, (history) =>
        walk(history, ({ body, before, next, outcome, after, at }) => {
          const said = `${JSON.stringify(body)} answered ${outcome.code}`;
          const failed = CODES[outcome.code].status >= 400 && outcome.code !== 'drain_blocked';
          if (failed) expect(outcome.changed, said).toBe(false);
          // Dropped by the daemon: so it must not have changed anything that would be lost.
          if (!outcome.changed) expect([stateOf(next), settledOf(next)], `${said} unchanged`).toEqual([stateOf(before), settledOf(before)]);
          const view = statusView(after, at);
          expect(view.next.length, `${view.situation} offers no way on`).toBeGreaterThan(0);
          for (const way of view.next) checkWay(view.situation, way);
          // Paused is a situation of its own; otherwise the situation is the state, refined.
          expect(view.situation.startsWith(stateOf(after)) || view.situation === 'paused').toBe(true);
        }),
      ),
      { numRuns: 300 },
    );
  });
});
