import { describe, expect, it } from 'vitest';
import { cachedRootResolver } from '../../../daemon/ingest/root-cache.js';

describe('the root cache', () => {
  it('runs one lookup for a directory asked about many times at once, and remembers its answer', async () => {
    const asked: string[] = [];
    let finish: (root: string) => void = () => undefined;
    const rootOf = cachedRootResolver((dir) => {
      asked.push(dir);
      return new Promise<string>((resolve) => (finish = resolve));
    });
    const answers = Promise.all(Array.from({ length: 8 }, () => rootOf('/w/a/src')));
    finish('/w/a');
    expect(await answers).toEqual(Array(8).fill('/w/a'));
    expect(await rootOf('/w/a/src')).toBe('/w/a');
    expect(asked).toEqual(['/w/a/src']);
  });

  it('does not remember a failed lookup: the next ask tries again', async () => {
    let calls = 0;
    const rootOf = cachedRootResolver(async () => {
      calls += 1;
      if (calls === 1) throw new Error('not a repository');
      return '/w/b';
    });
    await expect(rootOf('/w/b')).rejects.toThrow('not a repository');
    expect(await rootOf('/w/b')).toBe('/w/b');
    expect(calls).toBe(2);
  });
});
