import { DRAIN_STEPS, exitCodeOf, type Envelope, type StatusView } from '../../protocol/index.js';

export interface Output {
  readonly json: boolean;
  out(text: string): void;
  err(text: string): void;
}

export const processOutput = (json: boolean): Output => ({
  json,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});

function ago(seconds: number): string {
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}

const NEXT_STEP: Record<StatusView['state'], string> = {
  NORMAL: 'nothing to do; `handoff now` evacuates by hand',
  PREPARE: 'refresh the capsule (objective, decisions, the one next action)',
  EVACUATE: 'finish only the current atomic step; the daemon is draining',
  HANDOFF_READY: 'a receiver verifies and takes over with `handoff accept CYCLE --as EXECUTOR`',
  TAKEOVER: 'the receiver works; it hands back with `handoff return`',
  RETURN_HANDOFF_READY: 'the primary takes the work back with `handoff accept CYCLE --return --as EXECUTOR`',
  CLOSED: 'the cycle is over; the next reading starts a new one',
};

function drainProgress(drain: NonNullable<StatusView['cycle']>['drain']): string {
  if (drain.waited === null) return 'waiting for the agent to finish its atomic step (`handoff drained`) or the drain timeout';
  const done = DRAIN_STEPS.filter((step) => drain.steps[step] !== undefined);
  const next = DRAIN_STEPS.find((step) => drain.steps[step] === undefined);
  return `${done.length} of ${DRAIN_STEPS.length} steps done${next ? `, next: ${next}` : ''}${drain.revision > 1 ? ` (revision ${drain.revision}: the work tree moved after a snapshot)` : ''}`;
}

export function renderStatus(view: StatusView): string {
  const lines = [`${view.workspace}`, `state     ${view.state} since ${view.stage_since}`];
  const { prepare_percent, evacuate_percent, hysteresis_percent } = view.thresholds;
  const pressure = view.pressure === null ? 'unknown (no credible reading)' : `${view.pressure.percent} % ${view.pressure.metric} from ${view.pressure.source}`;
  lines.push(`pressure  ${pressure}   lines ${prepare_percent} / ${evacuate_percent} (back below ${prepare_percent - hysteresis_percent})`);
  if (view.paused !== null) lines.push(`PAUSED    ${view.paused.scope}${view.paused.reason ? `: ${view.paused.reason}` : ''} (${view.paused.path})`);
  if (view.blocked !== null) lines.push(`BLOCKED   ${view.blocked}`);
  if (view.cycle !== null) {
    lines.push(`cycle     ${view.cycle.id} (${view.cycle.trigger.kind}: ${view.cycle.trigger.reason})`);
    if (view.state === 'EVACUATE') lines.push(`drain     ${drainProgress(view.cycle.drain)}`);
  }
  lines.push(`capsule   ${view.capsule === null ? 'none yet — the agent writes it with `handoff capsule set`' : view.capsule.error ? `INVALID: ${view.capsule.error}` : `updated ${view.capsule.updated_at}`}`);
  const holder = view.lease.holder;
  lines.push(`lease     ${holder === null ? 'free' : `held by ${holder.executor}, token ${holder.token}, since ${holder.acquired_at}`}${view.lease.offered ? ' (on offer)' : ''}`);
  if (view.lease.last_break !== null) {
    const b = view.lease.last_break;
    lines.push(`          broken ${b.at} by an operator: ${b.reason}${b.executor ? ` (was ${b.executor}, token ${b.token})` : ''}`);
  }
  lines.push('readings');
  if (view.readings.length === 0) lines.push('  none yet');
  for (const r of view.readings) {
    const percent = r.used_percent === null ? 'unknown' : `${r.used_percent} %`;
    const resets = r.resets_at === null ? '' : ` resets ${new Date(r.resets_at * 1000).toISOString()}`;
    lines.push(`  ${r.metric.padEnd(10)} ${percent.padStart(8)}  ${r.source}${r.executor ? ` (${r.executor})` : ''}  ${ago(r.age_seconds)}${resets}${r.credible ? '' : `  — not counted: ${r.not_credible}`}`);
  }
  lines.push(`next      ${NEXT_STEP[view.state]}`);
  return lines.join('\n');
}

/** Prints the Envelope (JSON: exactly one object on stdout) and returns the exit code. */
export function emit(output: Output, envelope: Envelope, human?: (data: never) => string): number {
  if (output.json) {
    output.out(JSON.stringify(envelope));
  } else if (envelope.error) {
    output.err(`error: ${envelope.error.message}\nhint: ${envelope.error.hint}`);
  } else if (human && envelope.data !== null) {
    output.out(human(envelope.data as never));
  } else {
    const data = envelope.data as { note?: string | null; state?: string } | null;
    output.out(`${envelope.code}${data?.state ? ` (state ${data.state})` : ''}${data?.note ? `: ${data.note}` : ''}`);
  }
  return exitCodeOf(envelope);
}
