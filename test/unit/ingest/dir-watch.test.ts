import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirWatches } from '../../../daemon/ingest/dir-watch.js';
import { tempDir } from '../../support/git.js';

const silent = { warn: () => undefined };
const opened: DirWatches[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((watches) => watches.close()));
});

/** Watches that record every (dir, name) they report; `next(dir, name)` settles when that one arrives. */
function recorder() {
  const waiting: { dir: string; name: string; done: () => void }[] = [];
  const watches = new DirWatches((dir, name) => {
    for (const wait of waiting.filter((w) => w.dir === dir && w.name === name)) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.done();
    }
  }, silent);
  opened.push(watches);
  const next = (dir: string, name: string) => new Promise<void>((done) => waiting.push({ dir, name, done }));
  return { watches, next };
}

describe('one watch per directory', () => {
  it('reports a file that appears or grows by its name, and holds one watch for the directory, none per file', async () => {
    const dir = tempDir('dir-watch');
    for (let i = 0; i < 50; i += 1) writeFileSync(join(dir, `old-${i}.jsonl`), 'x\n');
    const { watches, next } = recorder();
    expect(await watches.add(dir)).toBe(true);
    expect(watches.size).toBe(1);
    const created = next(dir, 'rollout-new.jsonl');
    writeFileSync(join(dir, 'rollout-new.jsonl'), 'line\n');
    await created;
    const grown = next(dir, 'old-7.jsonl');
    writeFileSync(join(dir, 'old-7.jsonl'), 'x\ny\n');
    await grown;
  });

  it('a watched subdirectory that is removed ends its watch; one made again under the same name is watched anew', async () => {
    const parent = tempDir('dir-watch');
    const day = join(parent, '02');
    mkdirSync(day);
    const { watches, next } = recorder();
    await watches.add(parent);
    await watches.add(day);
    expect(watches.has(day)).toBe(true);
    const removed = next(parent, '02');
    rmSync(day, { recursive: true });
    await removed;
    expect(watches.has(day)).toBe(false);
    expect(await watches.add(day)).toBe(false);
    const made = next(parent, '02');
    mkdirSync(day);
    await made;
    expect(await watches.add(day)).toBe(true);
    const file = next(day, 'rollout-a.jsonl');
    writeFileSync(join(day, 'rollout-a.jsonl'), 'line\n');
    await file;
    expect(watches.size).toBe(2);
  });
});
