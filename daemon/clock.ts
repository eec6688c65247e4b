import { randomBytes } from 'node:crypto';
import type { EventMeta } from '../protocol/index.js';

/** Time and chance come in through here only, so tests can fix both. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Milliseconds for every wait and deadline: they must not move when the wall clock is set (NTP, a
 * person, a VM resumed), so a step back never stretches a wait. The wall clock is for what a person reads.
 */
export interface Monotonic {
  now(): number;
}

export const systemMonotonic: Monotonic = { now: () => performance.now() };

/** Work the daemon repeats (the coalesced readings write, the lease sync): on the clock that runs it. */
export interface Intervals {
  /** Runs `task` every `ms` until the returned function is called. */
  every(ms: number, task: () => Promise<void>): () => void;
}

/** Node's timers, unref'd: a repeating task never keeps the process alive by itself. */
export const systemIntervals: Intervals = {
  every(ms, task) {
    const timer = setInterval(() => void task(), ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Random bytes drawn in blocks: one syscall serves hundreds of events. */
let pool = Buffer.alloc(0);
let used = 0;

/** Six base32 characters (30 bits): the random half of a cycle id. */
export function randomEntropy(): string {
  if (used + 6 > pool.length) {
    pool = randomBytes(1536);
    used = 0;
  }
  // Six characters by hand: a view, an array and a join per event were ~2 % of a reading's CPU.
  let text = '';
  for (let end = used + 6; used < end; used += 1) text += BASE32[(pool[used] ?? 0) & 31];
  return text;
}

export function eventMeta(clock: Clock, entropy: () => string = randomEntropy): EventMeta {
  return { at: clock.now(), entropy: entropy() };
}
