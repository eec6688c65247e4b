import { byCodeUnits } from '../../../protocol/code-unit-order.js';
import type { StatusView } from '../../../protocol/index.js';
import { cycleTime, relativeTime, shortSha, table, type Renderer } from './format.js';

interface CycleRow {
  readonly cycle: string;
  readonly workspace: string;
  /** The live state of the workspace's current cycle, else `abandoned` or `ended`. */
  readonly state: string;
  readonly revisions: number;
  readonly integrity: string;
  readonly abandoned: boolean;
}

/** `handoff list`: one row per cycle, newest first, with its age and the workspace it came from. */
export const renderCycles: Renderer<{ readonly cycles: readonly CycleRow[]; readonly total: number; readonly note?: string }> = (data, _code, view) => {
  if (data.cycles.length === 0) return 'no cycles on record yet\nnext: `handoff now` evacuates by hand; telemetry at the evacuate line does it by itself';
  const rows = [...data.cycles]
    .sort((a, b) => byCodeUnits(b.cycle, a.cycle))
    .map((c) => [
      c.cycle,
      c.state,
      relativeTime(cycleTime(c.cycle), view.nowMs),
      c.integrity === 'ok' ? `ok (${c.revisions})` : `FAILED (${c.revisions})`,
      c.workspace,
    ]);
  return [
    ...table(['CYCLE', 'STATE', 'STARTED', 'INTEGRITY', 'WORKSPACE'], rows),
    ...(data.note ? [data.note] : []),
    `${data.total} cycle${data.total === 1 ? '' : 's'} on record; \`handoff show CYCLE\` shows one`,
  ].join('\n');
};

interface Revision {
  readonly path: string;
  readonly leg: 'out' | 'return';
  readonly revision: number;
  readonly integrity: string;
  readonly problem: string | null;
  readonly current: boolean;
  readonly created_at: string | null;
  readonly checkpoint: {
    readonly mechanism: string;
    readonly ref: string | null;
    readonly commit: string | null;
    readonly remote: string | null;
    readonly remote_verified: boolean;
  } | null;
}

interface Abandoned {
  readonly leg: string;
  readonly at: string;
  readonly reason: string | null;
  readonly kept_ref: string | null;
}

interface CycleShown {
  readonly cycle: string;
  readonly workspace: string;
  readonly state: string | null;
  readonly revisions: readonly Revision[];
  readonly abandoned: readonly Abandoned[];
  readonly status: StatusView | null;
}

/** `handoff show CYCLE`: each manifest revision with its integrity, its branch and where HANDOFF.md is. */
export const renderCycle: Renderer<CycleShown> = (data, _code, view) => {
  const lines = [`cycle ${data.cycle} of ${data.workspace}: ${data.state ?? 'no longer current'} (started ${relativeTime(cycleTime(data.cycle), view.nowMs)})`];
  for (const r of data.revisions) {
    const integrity = r.integrity === 'ok' ? 'integrity ok' : `INTEGRITY FAILED: ${r.problem ?? r.integrity}`;
    lines.push(`${r.leg} leg, revision ${r.revision}${r.current ? '' : ' (superseded)'}, written ${relativeTime(r.created_at, view.nowMs)}: ${integrity}`);
    const c = r.checkpoint;
    if (c !== null) {
      const where = c.remote === null ? 'on this machine only' : `on ${c.remote}${c.remote_verified ? ' (read back)' : ' (not verified)'}`;
      lines.push(`  branch    ${c.ref?.replace(/^refs\/heads\//, '') ?? 'none'} at ${shortSha(c.commit)} ${where}`);
    }
    lines.push(`  manifest  ${r.path}`);
    lines.push(`  read      ${r.path.replace(/manifest((\.\d+)?)\.json$/, (_all, revision: string) => `HANDOFF${revision}.md`)}`);
  }
  for (const a of data.abandoned)
    lines.push(`abandoned ${a.leg} leg ${relativeTime(a.at, view.nowMs)}${a.reason ? `: ${a.reason}` : ''}${a.kept_ref ? ` (kept ${a.kept_ref})` : ''}`);
  const next = data.status?.next[0]?.why;
  if (next !== undefined) lines.push(`next: ${next}`);
  return lines.join('\n');
};
