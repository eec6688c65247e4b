import { DRAIN_STEPS, type DrainProgress, type DrainStep } from './drain-plan.js';
import type { StatusView } from './status-view.js';
import { formatDuration } from './time-words.js';
import { stageMoveWords } from './stage-move-words.js';
import { runningDrain } from './running-drain.js';

// The CLI's words for times: one module with no imports, so the dashboard page loads the same one.
export { formatAge, formatDuration } from './time-words.js';

/**
 * The status in plain words, for people: the human `handoff status` and the dashboard say the same
 * things. Pure: time comes in as `nowMs`.
 */

export const STEP_WORDS: Readonly<Record<DrainStep, string>> = {
  inspect: 'look at the repository',
  validate: 'run the quick validation',
  snapshot: 'snapshot the work tree onto a commit',
  package: 'write manifest.json and HANDOFF.md',
  publish: 'push the handoff branch, the package and the lease offer at once, and check the remote has them',
  offer: 'offer the lease',
};

export interface StepReport {
  readonly step: DrainStep;
  readonly words: string;
  readonly status: 'done' | 'running' | 'blocked' | 'pending';
  /** How long it took (done), has been running (running) or ran before it stopped (blocked), in seconds; null when pending. */
  readonly seconds: number | null;
}

export interface DrainReport {
  readonly leg: 'out' | 'return';
  /** Still waiting for the agent's `handoff drained` (or the drain timeout). */
  readonly waiting: boolean;
  readonly waiting_seconds: number;
  readonly done: number;
  readonly total: number;
  readonly current: StepReport | null;
  readonly steps: readonly StepReport[];
  readonly revision: number;
}

export interface PlainStatus {
  /** One sentence: where this workspace stands. */
  readonly headline: string;
  /** Why nothing moves, in plain words (a blocked drain or the kill switch), or null. */
  readonly blocked: string | null;
  /** The one thing to do next. */
  readonly next: string;
  readonly drain: DrainReport | null;
}

/** Whole seconds between two journal times; unknown (null) when either does not parse, never NaN. */
const seconds = (fromIso: string | null | undefined, toMs: number): number | null => {
  if (fromIso === null || fromIso === undefined) return null;
  const elapsed = toMs - Date.parse(fromIso);
  return Number.isFinite(elapsed) ? Math.max(0, Math.round(elapsed / 1000)) : null;
};

/** Which step a drain is on and how long each took: a step's time runs from the end of the one before it. */
export function drainReport(drain: DrainProgress, blocked: boolean, nowMs: number): DrainReport {
  const steps: StepReport[] = [];
  let previousEnd = drain.waited?.at ?? null;
  let current: StepReport | null = null;
  for (const step of DRAIN_STEPS) {
    const record = drain.steps[step];
    if (record !== undefined) {
      steps.push({ step, words: STEP_WORDS[step], status: 'done', seconds: previousEnd === null ? null : seconds(previousEnd, Date.parse(record.at)) });
      previousEnd = record.at;
    } else if (current === null && drain.waited !== null) {
      const until = blocked && drain.blocked_at !== undefined ? Date.parse(drain.blocked_at) : nowMs;
      current = { step, words: STEP_WORDS[step], status: blocked ? 'blocked' : 'running', seconds: seconds(previousEnd, until) };
      steps.push(current);
    } else {
      steps.push({ step, words: STEP_WORDS[step], status: 'pending', seconds: null });
    }
  }
  return {
    leg: drain.leg,
    waiting: drain.waited === null,
    waiting_seconds: drain.waited === null ? (seconds(drain.started_at, nowMs) ?? 0) : 0,
    done: steps.filter((s) => s.status === 'done').length,
    total: DRAIN_STEPS.length,
    current,
    steps,
    revision: drain.revision,
  };
}

/** "3 of 6 steps done; now: snapshot the work tree onto a commit (running 4 s)". */
export function describeDrain(report: DrainReport): string {
  if (report.waiting)
    return `waiting ${formatDuration(report.waiting_seconds)} for the agent to finish its atomic step (\`handoff drained\`) or the drain timeout`;
  const now = report.current;
  const head = `${report.done} of ${report.total} steps done`;
  const revision = report.revision > 1 ? ` (revision ${report.revision}: the work tree moved after a snapshot)` : '';
  if (now === null) return `${head}${revision}`;
  const how = now.status === 'blocked' ? 'stopped' : 'running';
  return `${head}; now: ${now.step} — ${now.words} (${how}${now.seconds === null ? '' : ` ${formatDuration(now.seconds)}`})${revision}`;
}

function pressureWords(view: StatusView): string {
  if (view.pressure === null) return 'no credible reading yet';
  return `${view.pressure.metric} at ${view.pressure.percent} % (${view.pressure.source})`;
}

function blockedWords(view: StatusView, report: DrainReport | null): string | null {
  if (view.blocked !== null) {
    const where = report?.current ? `at “${report.current.words}” (${report.current.step})` : 'before it finished';
    const reason = view.blocked.replace(/[.\s]+$/, '');
    const resume = /handoff resume/.test(reason) ? '' : ' Fix the cause, then run `handoff resume`.';
    return `The ${report?.leg === 'return' ? 'return' : 'evacuation'} stopped ${where}: ${reason}. Nothing of yours was changed.${resume}`;
  }
  if (view.paused !== null) {
    const scope = view.paused.scope === 'global' ? 'every workspace' : 'this workspace';
    return `The kill switch is on for ${scope}${view.paused.reason ? ` (“${view.paused.reason}”)` : ''}: nothing starts or moves until \`handoff unpause\`${view.paused.scope === 'global' ? ' --global' : ''} or the PAUSE file is removed.`;
  }
  return null;
}

/** NORMAL and PREPARE in words: never "below the line" for a reading at or above it (docs/concepts.md, Readings and pressure). */
function pressureHeadline(view: StatusView): string {
  const { prepare_percent, evacuate_percent } = view.thresholds;
  const { pressure, held_back } = view;
  const normal = view.state === 'NORMAL';
  if (pressure === null)
    return normal
      ? 'Working normally; no credible reading yet.'
      : `Under pressure: no credible reading yet. Work goes on; the daemon evacuates at ${evacuate_percent} %.`;
  const head = normal ? `Working normally: ${pressureWords(view)}` : `Under pressure: ${pressureWords(view)}`;
  if (held_back !== null) return `${head}; held by the kill switch: would be ${stageMoveWords(held_back)}.`;
  const line = normal ? prepare_percent : evacuate_percent;
  if (pressure.percent < line) return normal ? `${head}, below the ${line} % line.` : `${head}. Work goes on; the daemon evacuates at ${line} %.`;
  const moves = normal ? 'moves the stage again' : 'evacuates';
  if (pressure.before_cancel) return `${head}, read before \`handoff cancel\`: only a newer reading at or above the ${line} % line ${moves}.`;
  return `${head}, at or above the ${line} % line.`;
}

function headlineOf(view: StatusView, report: DrainReport | null): string {
  const cycle = view.cycle?.id ?? '';
  const holder = view.lease.holder;
  switch (view.state) {
    case 'NORMAL':
    case 'PREPARE':
      return pressureHeadline(view);
    case 'EVACUATE':
      return `Evacuating (${view.cycle?.trigger.reason ?? 'by hand'}): ${report === null ? 'draining' : describeDrain(report)}.`;
    case 'HANDOFF_READY':
      return `Ready to hand over: cycle ${cycle} is recoverable and its lease is on offer.`;
    case 'TAKEOVER':
      if (report !== null) return `Handing back: ${describeDrain(report)}.`;
      return `Taken over${holder ? ` by ${holder.executor} (token ${holder.token})` : ''}; cycle ${cycle}.`;
    case 'RETURN_HANDOFF_READY':
      return `The work came back: cycle ${cycle}'s return is recoverable and waits for the primary.`;
    case 'CLOSED':
      return `Cycle ${cycle} is closed.`;
  }
}

/** The first way on (docs/concepts.md, "Ways out"), in words: the data is `view.next`. */
function nextOf(view: StatusView): string {
  return view.next[0]?.why ?? 'nothing to do';
}

export function plainStatus(view: StatusView, nowMs: number): PlainStatus {
  const drain = runningDrain(view.state, view.cycle);
  const report = drain !== null ? drainReport(drain, view.blocked !== null, nowMs) : null;
  return { headline: headlineOf(view, report), blocked: blockedWords(view, report), next: nextOf(view), drain: report };
}
