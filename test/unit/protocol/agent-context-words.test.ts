import { describe, expect, it } from 'vitest';
import { clipBytes, contextText, pickupText, type ContextFacts, type ContextKind, type StageView } from '../../../protocol/agent-context.js';
import { recoveryCommands } from '../../../protocol/handoff-render.js';
import type { Manifest } from '../../../schemas/index.js';
import { checkpoint, manifestWith } from './manifest-fixture.js';

const CYCLE = '20261129T081500Z-k3f9qa';
const WRITE =
  '`handoff capsule template` prints the Markdown skeleton; fill Objective, Next action (exactly one, naming a file, command or test), Acceptance criteria, Work (completed, in progress, remaining), Decisions, Do not repeat and First files, then store it with `handoff capsule set` (the Markdown or JSON on stdin, or `--file FILE`).';
const view = (over: Partial<StageView>): StageView => ({
  state: 'PREPARE',
  stage: 's',
  returning: false,
  paused: false,
  holder: null,
  capsuleFresh: false,
  ...over,
});
const facts = (over: Partial<ContextFacts> = {}): ContextFacts => ({
  workspace: '/w',
  session: 's1',
  view: view({}),
  cycle: CYCLE,
  pressure: null,
  quality: null,
  toolCalls: 4,
  handoffPath: null,
  ...over,
});
const say = (kind: ContextKind, over: Partial<ContextFacts> = {}) => contextText(kind, facts(over));

// The notices are the contract with the agent: each sentence is pinned, so a change to one is a decision.
describe('contextText: what each stage tells the working agent, word for word', () => {
  it('PREPARE without a reading or a score', () => {
    expect(say('prepare')).toBe(
      `session-handoff: /w is in PREPARE: this session may be cut off soon. Keep working, and write the handoff capsule now so another session can continue: ${WRITE} Refresh it when the next action changes.`,
    );
  });

  it('the reminder counts the tool calls and gives the score', () => {
    expect(say('reminder', { quality: { score: 5, max: 6, missing: ['no first files'] } })).toBe(
      `session-handoff reminder: /w is still in PREPARE, and the capsule was not written since PREPARE began (4 tool calls since the notice). Write it now: ${WRITE} Now: capsule 5/6: no first files.`,
    );
  });

  it('EVACUATE for the return leg names the cycle and always asks to refresh the capsule', () => {
    expect(say('evacuate', { view: view({ state: 'TAKEOVER', returning: true, holder: 's1', capsuleFresh: true }) })).toBe(
      `session-handoff: /w is in EVACUATE: the return leg of cycle ${CYCLE} is being checkpointed. Finish only the atomic step you are in and start nothing new. Refresh the capsule first if it is out of date: \`handoff capsule set\` with the Markdown on stdin (skeleton: \`handoff capsule template\`). Then run \`handoff drained\` and stop: change no files after that.`,
    );
  });

  it('EVACUATE for a session that does not hold the lease closes its edits', () => {
    expect(say('evacuate', { view: view({ state: 'EVACUATE', holder: 'other', capsuleFresh: true }) })).toBe(
      'session-handoff: /w is in EVACUATE: the daemon is checkpointing this work tree for another session. Finish only the atomic step you are in and start nothing new. File edits are closed to this session (it does not hold the lease): leave the files as they are. Then run `handoff drained` and stop: change no files after that.',
    );
  });

  it('HANDOFF_READY: change nothing here; read the brief, then the accept', () => {
    expect(say('frozen', { view: view({ state: 'HANDOFF_READY' }), handoffPath: 'H.md' })).toBe(
      `session-handoff: /w is HANDOFF_READY (cycle ${CYCLE}): the work is handed off and frozen, so change no files here. To take it over, read H.md, then verify and take the lease: \`handoff accept ${CYCLE} --as s1\`.`,
    );
  });

  it('RETURN_HANDOFF_READY: the primary takes it back here', () => {
    expect(say('frozen', { view: view({ state: 'RETURN_HANDOFF_READY' }) })).toBe(
      `session-handoff: /w is RETURN_HANDOFF_READY (cycle ${CYCLE}): the work was handed back and is frozen, so change no files here. The primary takes it back into this work tree: \`handoff accept ${CYCLE} --return --as s1\`.`,
    );
  });

  it('TAKEOVER: another executor works on it; without a cycle the placeholder names what goes there', () => {
    expect(say('frozen', { view: view({ state: 'TAKEOVER' }), cycle: null })).toBe(
      'session-handoff: /w is in TAKEOVER (cycle CYCLE): another executor holds the lease and works on it, so this session changes no files. `handoff status` shows the stage.',
    );
  });
});

describe('clipBytes: at most limit UTF-8 bytes', () => {
  it('keeps text of exactly the limit whole; one byte more is cut to fit with the mark', () => {
    expect(clipBytes('abcdef', 6)).toBe('abcdef');
    expect(clipBytes('abcdefg', 6)).toBe('abc…');
    expect(clipBytes('abcdefg', 2)).toBe('…');
  });
});

describe('pickupText: the lines a new session reads first, word for word', () => {
  const manifest = (over: Partial<Manifest> = {}): Manifest => ({ ...manifestWith(null), ...over });
  const base = { state: 'HANDOFF_READY' as const, workspace: '/w', session: null, handoffPath: 'H.md', problem: null };

  it('no capsule: says so, then the accept, the brief, and the recovery commands when no remote carries the checkpoint', () => {
    const local = manifest({ checkpoint: { ...checkpoint, mechanism: 'local_ref', remote: '/src' } });
    const text = pickupText({ ...base, cycle: local.cycle_id, manifest: local });
    expect(text.split('\n')).toEqual([
      `session-handoff: a handoff is ready in /w (cycle ${local.cycle_id}, revision 1).`,
      'Next action: none: no capsule was written; read the repository state first.',
      'Capsule quality, scored by session-handoff: capsule 3/6: no acceptance criteria',
      `Before acting, verify and take the lease here: handoff accept ${local.cycle_id}`,
      'Then read H.md: objective, work lists, decisions, do-not-repeat, validations, risks.',
      'To recover the source in another checkout instead:',
      ...recoveryCommands(local).map((command) => `  ${command}`),
      'Real source state wins over the capsule. The handoff grants no permission; only the lease does.',
    ]);
  });

  it('a capsule without a next action says none was named', () => {
    const written = manifest({ capsule_source: 'agent' });
    expect(pickupText({ ...base, cycle: written.cycle_id, manifest: written }).split('\n')[1]).toBe(
      'Next action: none named: read the objective and work lists.',
    );
  });

  it('the return leg with an unreadable manifest: the pointer, the verify that says more, the return accept', () => {
    const text = pickupText({ ...base, state: 'RETURN_HANDOFF_READY', cycle: 'C', manifest: null, problem: null });
    expect(text.split('\n')).toEqual([
      'session-handoff: the work in /w was handed back (cycle C, return leg).',
      'The manifest could not be read (unknown reason); `handoff verify C --return` says more.',
      'Before acting, take the work back into this work tree and the lease: handoff accept C --return',
      'Then read H.md: objective, work lists, decisions, do-not-repeat, validations, risks.',
      'Real source state wins over the capsule. The handoff grants no permission; only the lease does.',
    ]);
  });
});
