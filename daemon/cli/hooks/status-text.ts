import type { IngestReport } from '../../../protocol/index.js';
import { wayOutSentence } from '../../../protocol/way-out.js';
import type { WayOut } from '../../../schemas/way-out.schema.js';
import type { DaemonAnswer } from './lean-client.js';

/** Short names: the status line is one row shared with the user's own items. */
const LABELS: Readonly<Record<string, string>> = {
  five_hour: '5h',
  seven_day: '7d',
  weekly: 'wk',
  monthly: 'mo',
  requests: 'req',
  tokens: 'tok',
  context: 'ctx',
};

const PROBLEMS: Readonly<Record<string, string>> = {
  not_a_repository: 'not in a git repository',
  invalid_body: 'unreadable status payload',
  unauthorized: 'wrong token for this daemon',
};

type Shown = Pick<IngestReport['recorded'][number], 'metric' | 'used_percent'>;

const percent = (value: number): string => `${Number(value.toFixed(1))}%`;

function readingsOf(data: Record<string, unknown>): Shown[] {
  const lists = [data['recorded'], data['unchanged']].filter(Array.isArray) as Shown[][];
  return lists.flat().filter((r) => typeof r.metric === 'string' && typeof r.used_percent === 'number');
}

/**
 * `handoff PREPARE · 5h 82% · ctx 59% · way out proven`: the workspace's state, the fullest quota
 * window and the context of the payload just sent, and the way out once rehearsed, or what went wrong in a few words.
 */
export function statusText(answer: DaemonAnswer): string {
  if (answer.kind === 'down') return 'handoff: daemon down';
  if (answer.kind === 'timeout') return 'handoff: daemon not answering';
  const { envelope } = answer;
  if (envelope.error !== undefined || envelope.data === null) return `handoff: ${PROBLEMS[envelope.code] ?? envelope.code.replaceAll('_', ' ')}`;
  const readings = readingsOf(envelope.data);
  const quota = readings.filter((r) => r.metric !== 'context').sort((a, b) => (b.used_percent ?? 0) - (a.used_percent ?? 0))[0];
  const context = readings.find((r) => r.metric === 'context');
  const parts = [`handoff ${String(envelope.data['state'])}`];
  for (const reading of [quota, context]) {
    if (reading !== undefined && reading.used_percent !== null) parts.push(`${LABELS[reading.metric] ?? reading.metric} ${percent(reading.used_percent)}`);
  }
  const wayOut = envelope.data['way_out'] as WayOut | undefined;
  const said = wayOut === undefined ? null : wayOutSentence(wayOut, 'short');
  if (said !== null) parts.push(said);
  return parts.join(' · ');
}

/** One row: the user's chained status line first, ours after it. */
export function joinStatus(theirs: string | null, ours: string): string {
  const line = theirs === null || theirs.trim() === '' ? ours : `${theirs.trimEnd()} | ${ours}`;
  return line.replace(/[\r\n]+/g, ' ');
}
