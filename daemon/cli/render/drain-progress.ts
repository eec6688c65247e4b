import { DRAIN_STEPS, type DrainProgress, type DrainStep } from '../../../protocol/drain-plan.js';
import type { StatusView } from '../../../protocol/status-view.js';
import { STEP_WORDS } from '../../../protocol/status-words.js';
import type { StepProgress } from '../../../schemas/index.js';
import { formatDuration, shortSha } from './format.js';

/** What a follower already said, so each poll adds only what is new. */
export interface Said {
  header: boolean;
  waiting: boolean;
  waited: boolean;
  readonly steps: Set<string>;
}

export const nothingSaid = (): Said => ({ header: false, waiting: false, waited: false, steps: new Set() });

/** The drain of the leg being followed, also once it finished (the ready states keep it). */
export function legDrain(view: StatusView): DrainProgress | null {
  const cycle = view.cycle;
  if (cycle === null) return null;
  if (view.state === 'EVACUATE' || view.state === 'HANDOFF_READY') return cycle.drain;
  if (view.state === 'TAKEOVER' || view.state === 'RETURN_HANDOFF_READY') return cycle.return_drain;
  return null;
}

// Grouped by hand: the first toLocaleString of a process loads ICU's number data, 17 ms of `handoff now`'s start.
const count = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const plural = (n: number, word: string): string => `${count(n)} ${word}${n === 1 ? '' : 's'}`;
const seconds = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : formatDuration(ms / 1000));
const WIDTH = Math.max(...DRAIN_STEPS.map((s) => s.length));

const WAITED: Readonly<Record<string, string>> = {
  no_agent: 'no agent session was seen working here, so there is no `handoff drained` to wait for',
  no_wait: '--no-wait: the drain did not wait for the agent',
  drained: 'the agent finished its atomic step (`handoff drained`)',
  timeout: 'the drain timeout passed without `handoff drained`; draining what is there',
};

/** A finished step in words, from the small facts its record keeps; null when it was skipped. */
function doneWords(step: DrainStep, summary: Readonly<Record<string, unknown>>): { words: string; skipped: boolean } {
  const n = (key: string) => (typeof summary[key] === 'number' ? summary[key] : 0);
  switch (step) {
    case 'inspect':
      return {
        words: `${plural(n('dirty'), 'changed file')} on ${typeof summary['branch'] === 'string' ? summary['branch'] : 'a detached HEAD'}`,
        skipped: false,
      };
    case 'validate':
      return summary['status'] === 'not_run'
        ? { words: 'no validation command is configured (`validation.command` in config.json)', skipped: true }
        : { words: `validation ${String(summary['status']).replace('_', ' ')}`, skipped: false };
    case 'snapshot': {
      const withheld = n('withheld');
      return {
        words: `${plural(n('scanned'), 'file')} scanned for secrets${n('scan_cached') > 0 ? ` (${count(n('scan_cached'))} more judged by an earlier scan of the same bytes)` : ''}${withheld > 0 ? `, ${count(withheld)} withheld (not pushed)` : ''}; commit ${shortSha(summary['commit'] as string)}`,
        skipped: false,
      };
    }
    case 'package':
      return { words: `${String(summary['manifest'] ?? 'manifest.json')} and ${String(summary['handoff'] ?? 'HANDOFF.md')} written`, skipped: false };
    case 'publish':
      return summary['mechanism'] === 'handoff_branch'
        ? { words: `pushed to ${String(summary['remote'])} and read back`, skipped: false }
        : { words: 'no remote to push to: the checkpoint stays on this machine', skipped: true };
    case 'offer':
      return { words: 'the lease is on offer', skipped: false };
  }
}

/** The step in flight, in words, with how far it got and for how long: the line a person watches. */
export function liveLine(view: StatusView, progress: StepProgress | null, nowMs: number): string | null {
  const drain = legDrain(view);
  if (drain === null || view.blocked !== null) return null;
  if (drain.waited === null) {
    const waited = Math.max(0, nowMs - Date.parse(drain.started_at));
    return `  … waiting for the agent to finish its atomic step and run \`handoff drained\` (${formatDuration(waited / 1000)} so far; the drain timeout ends the wait)`;
  }
  const step = DRAIN_STEPS.find((s) => drain.steps[s] === undefined);
  if (step === undefined) return null;
  const since = progress?.step === step ? Date.parse(progress.started_at) : Date.parse(previousEnd(drain, step) ?? drain.started_at);
  const elapsed = seconds(Math.max(0, nowMs - since));
  const inner =
    progress?.step !== step || progress.phase === null
      ? STEP_WORDS[step]
      : progress.phase === 'secret scan'
        ? `scanning for secrets: ${progress.total === null ? count(progress.done ?? 0) : `${count(progress.done ?? 0)} of ${plural(progress.total, 'file')}`}`
        : 'writing the snapshot commit';
  // The time first, like a finished step's: on a narrow terminal the words are what gets cut.
  return `  ▸ ${step.padEnd(WIDTH)}  ${elapsed.padStart(7)}  ${inner}`;
}

function previousEnd(drain: DrainProgress, step: DrainStep): string | null {
  const index = DRAIN_STEPS.indexOf(step);
  for (let i = index - 1; i >= 0; i -= 1) {
    const at = drain.steps[DRAIN_STEPS[i] as DrainStep]?.at;
    if (at !== undefined) return at;
  }
  return drain.waited?.at ?? null;
}

/** The lines this poll adds: the header once, why the wait ended, and each step finished since (skipped ones named). */
export function newLines(view: StatusView, said: Said): string[] {
  const drain = legDrain(view);
  const cycle = view.cycle;
  if (drain === null || cycle === null) return [];
  const lines: string[] = [];
  if (!said.header) {
    said.header = true;
    lines.push(`${drain.leg === 'return' ? 'handing back' : 'evacuating'} ${view.workspace}: cycle ${cycle.id}, ${DRAIN_STEPS.length} steps`);
  }
  if (drain.waited === null && !said.waiting) {
    said.waiting = true;
  } else if (drain.waited !== null && !said.waited) {
    said.waited = true;
    lines.push(`  ${WAITED[drain.waited.why] ?? drain.waited.why}`);
  }
  for (const step of DRAIN_STEPS) {
    const record = drain.steps[step];
    const key = `${drain.revision}:${step}`;
    if (record === undefined || said.steps.has(key)) continue;
    said.steps.add(key);
    const from = previousEnd(drain, step);
    const took = from === null ? '' : seconds(Math.max(0, Date.parse(record.at) - Date.parse(from)));
    const { words, skipped } = doneWords(step, record.summary);
    lines.push(skipped ? `  - ${step.padEnd(WIDTH)}  ${'skipped'.padStart(7)}  ${words}` : `  ✓ ${step.padEnd(WIDTH)}  ${took.padStart(7)}  ${words}`);
  }
  return lines;
}
