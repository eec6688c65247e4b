import { randomBytes } from 'node:crypto';
import type { EventMeta } from '../protocol/index.js';

/** Time and chance come in through here only, so tests can fix both. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Six base32 characters (30 bits): the random half of a cycle id. */
export function randomEntropy(): string {
  return Array.from(randomBytes(6), (byte) => BASE32[byte & 31]).join('');
}

export function eventMeta(clock: Clock, entropy: () => string = randomEntropy): EventMeta {
  return { at: clock.now(), entropy: entropy() };
}
