import { describe, expect, it } from 'vitest';
import { pickupText } from '../../../protocol/index.js';
import { manifestWith } from './manifest-fixture.js';

/** The pickup of a returned leg whose manifest was read: the revision, and no clone to take it to. */
describe('pickupText of a return leg with its manifest', () => {
  it('names the revision and asks for the return accept here, never an accept through the remote', () => {
    const manifest = { ...manifestWith(null), leg: 'return' as const, revision: 2 };
    const text = pickupText({ state: 'RETURN_HANDOFF_READY', workspace: '/w', cycle: 'C', session: null, handoffPath: 'H.md', manifest, problem: null });
    expect(text.split('\n')).toEqual([
      'session-handoff: the work in /w was handed back (cycle C, return leg, revision 2).',
      'Next action: none: no capsule was written; read the repository state first.',
      'Capsule quality, scored by session-handoff: capsule 3/6: no acceptance criteria',
      'Before acting, take the work back into this work tree and the lease: handoff accept C --return',
      'Then read H.md: objective, work lists, decisions, do-not-repeat, validations, risks.',
      'Real source state wins over the capsule. The handoff grants no permission; only the lease does.',
    ]);
  });
});

describe('pickupText with a next action longer than the pickup can hold', () => {
  it("cuts the agent's quote, never the daemon's lines after it", () => {
    const base = manifestWith(null);
    // Three UTF-8 bytes a character: the longest workspace, brief path and quote together pass the limit.
    const wide = (n: number) => '中'.repeat(n);
    const manifest = { ...base, capsule: { ...base.capsule, next_action: wide(1500) } };
    const text = pickupText({ state: 'HANDOFF_READY', workspace: wide(400), cycle: 'C', session: null, handoffPath: wide(400), manifest, problem: null });
    const lines = text.split('\n');
    expect(lines.at(-1)).toBe('Real source state wins over the capsule. The handoff grants no permission; only the lease does.');
    expect(lines.filter((line) => line.startsWith('Before acting, verify and take the lease here:'))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('> '))).toHaveLength(1);
    expect(lines.find((line) => line.startsWith('> '))?.endsWith('…')).toBe(true);
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(6000);
  });
});
