import { describe, expect, it } from 'vitest';
import { formatAge, formatDuration, formatRelative } from '../../../protocol/time-words.js';

// The CLI and the dashboard print these words; each unit takes over exactly at its boundary.
describe('formatAge: seconds up to 89, then minutes, hours and days, each rounded', () => {
  it.each([
    [-5, '0 s ago'],
    [0, '0 s ago'],
    [89.4, '89 s ago'],
    [89.5, '2 min ago'],
    [90 * 60 - 1, '90 min ago'],
    [90 * 60, '2 h ago'],
    [36 * 3600 - 1, '36 h ago'],
    [36 * 3600, '2 days ago'],
    [10 * 86400, '10 days ago'],
  ])('%s s is "%s"', (seconds, words) => {
    expect(formatAge(seconds)).toBe(words);
  });
});

describe('formatDuration: whole units, the smaller one shown only when it is not zero', () => {
  it.each([
    [-3, '0 s'],
    [59, '59 s'],
    [59.5, '1 min'],
    [60, '1 min'],
    [61, '1 min 1 s'],
    [599, '9 min 59 s'],
    [600, '10 min'],
    [659, '10 min'],
    [3599, '59 min'],
    [3600, '1 h'],
    [3659, '1 h'],
    [3660, '1 h 1 min'],
    [7500, '2 h 5 min'],
    [48 * 3600 - 1, '47 h 59 min'],
    [48 * 3600, '2 days'],
    [3.6 * 86400, '4 days'],
  ])('%s s is "%s"', (seconds, words) => {
    expect(formatDuration(seconds)).toBe(words);
  });
});

describe('formatRelative: ahead is "in …", behind or within clock skew is "… ago"', () => {
  it.each([
    [7500, 'in 2 h 5 min'],
    [2, 'in 2 s'],
    [1.9, '0 s ago'],
    [0, '0 s ago'],
    [-180, '3 min ago'],
  ])('%s s is "%s"', (seconds, words) => {
    expect(formatRelative(seconds)).toBe(words);
  });
});
