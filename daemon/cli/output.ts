import { exitCodeOf, type Envelope } from '../../protocol/envelope.js';
import type { StatusView } from '../../protocol/status-view.js';
import { printable, printableDeep, printableJson } from '../../protocol/printable.js';
import { formatAge, formatDuration, plainStatus, type DrainReport } from '../../protocol/status-words.js';
import { wayOutSentence } from '../../protocol/way-out.js';
import { processView, relativeTime, wrapAll, type Renderer, type View } from './render/index.js';

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

/** Colour only for a person at a terminal: never in a pipe, a file, or with NO_COLOR set. */
export function colorWanted(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] ?? '') === '' && env['TERM'] !== 'dumb';
}

type Paint = (text: string) => string;
interface Palette {
  readonly bold: Paint;
  readonly dim: Paint;
  readonly red: Paint;
  readonly yellow: Paint;
  readonly green: Paint;
  readonly cyan: Paint;
}

const sgr =
  (open: number, close: number): Paint =>
  (text) =>
    `\u001b[${open}m${text}\u001b[${close}m`;
const COLORS: Palette = { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), yellow: sgr(33, 39), green: sgr(32, 39), cyan: sgr(36, 39) };
const plain: Paint = (text) => text;
const NO_COLORS: Palette = { bold: plain, dim: plain, red: plain, yellow: plain, green: plain, cyan: plain };

const STATE_PAINT: Record<StatusView['state'], keyof Palette> = {
  NORMAL: 'green',
  PREPARE: 'yellow',
  EVACUATE: 'red',
  HANDOFF_READY: 'cyan',
  TAKEOVER: 'cyan',
  RETURN_HANDOFF_READY: 'cyan',
  CLOSED: 'green',
};

/** At most this many readings: the worst come first, the rest are one `--json` away. */
const READINGS_SHOWN = 8;
const BAR_WIDTH = 10;
/** A reason or a path longer than this is cut on the status screen; `--json` has it whole. */
const STATUS_FIELD_CHARS = 600;

function bar(percent: number | null, line: { prepare: number; evacuate: number }, c: Palette): string {
  if (percent === null) return c.dim('·'.repeat(BAR_WIDTH));
  const filled = Math.max(0, Math.min(BAR_WIDTH, Math.round((percent / 100) * BAR_WIDTH)));
  const paint = percent >= line.evacuate ? c.red : percent >= line.prepare ? c.yellow : c.green;
  return paint('█'.repeat(filled)) + c.dim('░'.repeat(BAR_WIDTH - filled));
}

function resetsIn(resetsAt: number | null, nowMs: number): string {
  if (resetsAt === null) return '';
  const left = resetsAt - nowMs / 1000;
  return left > 0 ? `  resets in ${formatDuration(left)}` : '  window reset';
}

function drainLines(report: DrainReport, c: Palette): string[] {
  if (report.waiting) return [];
  const marks = report.steps.map((s) => {
    const time = s.seconds === null ? '' : ` ${formatDuration(s.seconds)}`;
    if (s.status === 'done') return c.green(`✓ ${s.step}${time}`);
    if (s.status === 'running') return c.yellow(`▸ ${s.step}${time}`);
    if (s.status === 'blocked') return c.red(`✗ ${s.step}${time}`);
    return c.dim(`· ${s.step}`);
  });
  return [`          ${marks.join('  ')}`];
}

export interface RenderOptions {
  readonly color: boolean;
  /** The reader's clock, for the drain's running times and the windows' resets. */
  readonly nowMs: number;
  /** Lines are folded to this width (the terminal's; 80 in a pipe); `--json` has every field whole. */
  readonly columns?: number;
}

/**
 * `handoff status` for people: one screen, the worst reading first, ages as "2 min ago", what is
 * blocked in plain words, the drain's step and how long it has run, and the one next thing to do.
 */
export function renderStatus(raw: StatusView, options: RenderOptions = { color: colorWanted(), nowMs: Date.now() }): string {
  const c = options.color ? COLORS : NO_COLORS;
  // One field, one bounded line: paths, reasons, git's words and agents' words cannot start lines of their own.
  const view = printableDeep(raw, { max: STATUS_FIELD_CHARS });
  const words = plainStatus(view, options.nowMs);
  const { prepare_percent, evacuate_percent, hysteresis_percent } = view.thresholds;
  const sinceSeconds = Math.max(0, (options.nowMs - Date.parse(view.stage_since)) / 1000);
  const lines = [c.bold(view.workspace)];
  lines.push(`state     ${c.bold(c[STATE_PAINT[view.state]](view.state))} since ${formatAge(sinceSeconds)}`);
  lines.push(`          ${words.headline}`);
  const pressure =
    view.pressure === null ? c.dim('unknown (no credible reading)') : `${view.pressure.percent} % ${view.pressure.metric} from ${view.pressure.source}`;
  lines.push(`pressure  ${pressure}   lines ${prepare_percent} / ${evacuate_percent} (back below ${prepare_percent - hysteresis_percent})`);
  if (view.paused !== null) lines.push(c.red(`PAUSED    ${view.paused.scope}${view.paused.reason ? `: ${view.paused.reason}` : ''} (${view.paused.path})`));
  if (words.blocked !== null && view.blocked !== null) lines.push(c.red(`BLOCKED   ${words.blocked}`));
  const wayOut = wayOutSentence(view.way_out, { nowMs: options.nowMs, evacuatePercent: evacuate_percent, age: formatAge });
  lines.push(view.way_out.state === 'blocked' ? c.red(wayOut) : wayOut);
  if (view.cycle !== null) {
    lines.push(`cycle     ${view.cycle.id} (${view.cycle.trigger.kind}: ${view.cycle.trigger.reason})`);
  }
  // In a receiver's checkout the answer is the taken-over cycle's: say so, and where its source is.
  const receiving = (view as { receiving?: { cycle: string; home: string; checkout: string } | null }).receiving;
  if (receiving) {
    // A cycle taken over through a remote has this checkout as its home: its source is on the remote, not here.
    const remote = view.cycle?.remote?.name;
    const source = receiving.home !== receiving.checkout ? receiving.home : remote === undefined ? 'another machine' : `the remote '${remote}'`;
    lines.push(`receiving cycle ${receiving.cycle} from ${source} (this checkout, ${receiving.checkout}, took it over)`);
  }
  if (words.drain !== null) {
    const d = words.drain;
    const leg = d.leg === 'return' ? 'return ' : '';
    const head = d.waiting
      ? `${leg}waiting ${formatDuration(d.waiting_seconds)} for the agent to finish its atomic step (\`handoff drained\`) or the drain timeout`
      : `${leg}${d.done} of ${d.total} steps done${d.current ? `; now ${d.current.step}: ${d.current.words}${d.current.seconds === null ? '' : ` (${d.current.status === 'blocked' ? 'stopped after' : 'running'} ${formatDuration(d.current.seconds)})`}` : ''}${d.revision > 1 ? ` — revision ${d.revision}, the work tree moved after a snapshot` : ''}`;
    lines.push(`drain     ${head}`, ...drainLines(d, c));
  }
  // What the secret scan kept back, pushed on purpose or could not scan (docs/security.md#secrets).
  const secrets = view.secrets;
  if (secrets !== null) {
    const said = [
      ...secrets.withheld.map((file) => `withheld  ${file}`),
      ...secrets.allowed.map((file) => `allowed   ${file} (pushed on purpose)`),
      ...secrets.unscanned.map((file) => `unscanned ${file}`),
      ...(secrets.allow_list === 'ignored' ? ['the allow list was ignored: it is tracked or in a commit, so the remote could have written it'] : []),
    ];
    said.forEach((text, index) => lines.push(`${index === 0 ? 'secrets' : '       '}   ${text}`));
  }
  lines.push(
    `capsule   ${view.capsule === null ? 'none yet — the agent writes it with `handoff capsule set`' : view.capsule.error ? c.red(`INVALID: ${view.capsule.error}`) : `updated ${relativeTime(view.capsule.updated_at, options.nowMs)}`}`,
  );
  const holder = view.lease.holder;
  lines.push(
    `lease     ${holder === null ? 'free' : `held by ${holder.executor}, token ${holder.token}, taken ${relativeTime(holder.acquired_at, options.nowMs)}`}${view.lease.offered ? c.cyan(' (on offer)') : ''}`,
  );
  if (view.lease.last_break !== null) {
    const b = view.lease.last_break;
    lines.push(
      `          broken ${relativeTime(b.at, options.nowMs)} by an operator: ${b.reason}${b.executor ? ` (was ${b.executor}, token ${b.token})` : ''}`,
    );
  }
  lines.push(`readings  ${view.readings.length === 0 ? c.dim('none yet') : c.dim('worst first')}`);
  const line = { prepare: prepare_percent, evacuate: evacuate_percent };
  for (const r of view.readings.slice(0, READINGS_SHOWN)) {
    const percent = (r.used_percent === null ? 'unknown' : `${r.used_percent} %`).padStart(8);
    // Session ids are long uuids: the first characters tell two sessions apart.
    const who = `${r.source}${r.executor ? ` (${r.executor.length > 12 ? `${r.executor.slice(0, 8)}…` : r.executor})` : ''}`;
    // A Codex per-model limit family is named as Codex names it (`limit_name`).
    const metric = r.limit === undefined ? r.metric : `${r.metric} ${r.limit.name ?? r.limit.id}`;
    const text = `  ${metric.padEnd(10)} ${percent} ${bar(r.used_percent, line, c)}  ${who}  ${formatAge(r.age_seconds)}${resetsIn(r.resets_at, options.nowMs)}`;
    lines.push(r.credible ? text : c.dim(`${text}  — not counted: ${r.not_credible}`));
  }
  if (view.readings.length > READINGS_SHOWN) lines.push(c.dim(`  … ${view.readings.length - READINGS_SHOWN} more: \`handoff status --json\``));
  const warning = view.warnings.at(-1);
  if (warning !== undefined) {
    const age = formatAge((options.nowMs - Date.parse(warning.observed_at)) / 1000);
    lines.push(`warning   ${warning.kind} from ${warning.source}, ${age}: ${warning.text.length > 100 ? `${warning.text.slice(0, 99)}…` : warning.text}`);
  }
  // The status answer carries the daemon's own facts too: whether the Codex tail runs. Waiting for a
  // Codex home that does not exist (or off) means no Codex here, which is nothing to tell its user.
  const tail = (view as { daemon?: { codex_tail?: { state: string; codex_home: string } | null } }).daemon?.codex_tail;
  if (tail && tail.state !== 'waiting' && tail.state !== 'off') lines.push(`codex     tail ${tail.state} (${tail.codex_home})`);
  lines.push(`next      ${c.bold(words.next)}`);
  // The other ways on (docs/concepts.md, "Ways out"); each says where to run it when it is another checkout.
  const [first, ...others] = view.next;
  if (first?.repo != null) lines.push(`          (in ${first.repo})`);
  for (const other of others) lines.push(`          ${other.why}${other.repo === null ? '' : ` (in ${other.repo})`}`);
  return wrapAll(lines, options.columns ?? 80);
}

/**
 * Prints the Envelope (JSON: exactly one object on stdout) and returns the exit code. What reaches
 * the terminal is printable: JSON escapes what JSON.stringify leaves raw (the value is unchanged),
 * and human output shows every control or bidi character of the daemon's data escaped. Every verb
 * brings its renderer: a success is always said in words, never as its bare code.
 */
export function emit(output: Output, envelope: Envelope, human: Renderer, view: View = processView()): number {
  if (output.json) {
    output.out(printableJson(envelope));
  } else if (envelope.error) {
    output.err(`error: ${printable(envelope.error.message, { lines: true })}\nhint: ${printable(envelope.error.hint, { lines: true })}`);
  } else {
    output.out(human(printableDeep(envelope.data, { lines: true }) as never, envelope.code, view));
  }
  return exitCodeOf(envelope);
}
