import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readJournal } from './journal-read.js';

/**
 * What each fault suite did, for the figure lines and the coverage table that the reporter prints
 * at the end of `npm run test:fault`. Suites run in worker processes, so figures travel as files
 * in the directory named by HANDOFF_FAULT_FIGURES (set by the root vitest.config.ts).
 */
export interface Figures {
  runs: number;
  kills: number;
  requests: number;
  /** Invariant violations the suite itself counted (failed tests are added by the reporter). */
  failures: number;
  /** Anything else worth a number: restarts, rounds, torn tails… */
  extra: Record<string, number>;
  /** What a number alone would hide, named: the ways-out rows no walk took, the situations no walk began in… */
  lists: Record<string, string[]>;
}

/** One observed change of state: `from` before the event, `to` after it settled (always-chains included). */
export interface Transition {
  readonly from: string;
  readonly event: string;
  readonly to: string;
}

export function figuresDir(): string {
  const dir = process.env['HANDOFF_FAULT_FIGURES'] ?? join(tmpdir(), 'handoff-fault-figures');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function newFigures(): Figures {
  return { runs: 0, kills: 0, requests: 0, failures: 0, extra: {}, lists: {} };
}

export function bump(figures: Figures, key: string, by = 1): void {
  figures.extra[key] = (figures.extra[key] ?? 0) + by;
}

/** Counts transitions by `from|event|to`. */
export class TransitionLog {
  readonly counts = new Map<string, number>();

  add(t: Transition, times = 1): void {
    const key = `${t.from}|${t.event}|${t.to}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + times);
  }

  /** Every record of a journal, per workspace root, as state → state under its event (self-loops included). */
  addJournal(path: string): void {
    const last = new Map<string, string>();
    for (const record of readJournal(path).records) {
      const r = record as { root?: string; state?: string; event?: { type?: string } };
      if (typeof r.root !== 'string' || typeof r.state !== 'string') continue;
      this.add({ from: last.get(r.root) ?? 'NORMAL', event: r.event?.type ?? '?', to: r.state });
      last.set(r.root, r.state);
    }
  }

  toJSON(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }
}

/** Writes this suite's figures and transitions for the reporter (one file per suite and worker). */
export function saveFigures(suite: string, figures: Figures, transitions: TransitionLog | null, seconds: number): void {
  const file = join(figuresDir(), `${suite}.${process.pid}.json`);
  writeFileSync(file, JSON.stringify({ suite, figures, seconds, transitions: transitions?.toJSON() ?? {} }));
}
