import { describe, expect, it } from 'vitest';
import { createOperations } from '../../../daemon/operations/index.js';

const ID = '0b7c3a52-5d1e-4f7a-9a51-6f2d0c8e1a33';

function clocked() {
  let now = 1_000;
  return { clock: { now: () => now }, advance: (ms: number) => (now += ms) };
}

describe('the operations at work', () => {
  it('lists a live one by the id its caller named it with, with its phase and age, and forgets it at its end', () => {
    const { clock, advance } = clocked();
    const operations = createOperations(clock);
    const op = operations.begin(ID, 'accept');
    op.phase("listing the offers on 'origin'");
    advance(12_000);
    expect(operations.list()).toEqual([
      { operation: ID, what: 'accept', phase: "listing the offers on 'origin'", elapsed_ms: 12_000, committed: false, cancelled: false },
    ]);
    op.end();
    expect(operations.list()).toEqual([]);
    expect(operations.cancel(ID)).toBeNull();
  });

  it('a cancel before the point of no return wins: commit() says no, so nothing may change', () => {
    const operations = createOperations(clocked().clock);
    const op = operations.begin(ID, 'accept');
    expect(operations.cancel(ID)).toMatchObject({ cancelled: true, committed: false });
    expect(op.commit()).toBe(false);
  });

  it('after commit() a cancel is refused and says so: the request goes on', () => {
    const operations = createOperations(clocked().clock);
    const op = operations.begin(ID, 'accept');
    expect(op.commit()).toBe(true);
    op.cancel();
    expect(operations.cancel(ID)).toMatchObject({ cancelled: false, committed: true });
  });

  it('an id already in use, or not a UUID, is not taken: one request never steers another', () => {
    const operations = createOperations(clocked().clock);
    operations.begin(ID, 'accept');
    const second = operations.begin(ID, 'verify');
    const third = operations.begin('../../x', 'verify');
    expect(new Set([ID, second.id, third.id]).size).toBe(3);
    expect(third.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
