import { basename, dirname, join } from 'node:path';
import { acceptCommand } from '../../../protocol/accept-command.js';
import type { Renderer } from './format.js';

interface Check {
  readonly name: string;
  readonly status: string;
  readonly detail: string;
}

interface Verdict {
  readonly checks: readonly Check[];
  readonly cycle: string;
  readonly leg: 'out' | 'return';
  /** The source's workspace on this machine; null when the package came from a remote only. */
  readonly workspace: string | null;
  readonly from: string | null;
  readonly manifest: string | null;
  readonly token?: number;
  readonly state?: string;
  readonly executor?: string;
  /** Where the executor id came from when the CLI chose it (no `--as`). */
  readonly executor_from?: string;
  readonly note?: string;
}

const MARK: Readonly<Record<string, string>> = { ok: '✓', warning: '!', failed: '✗' };

function checkLines(checks: readonly Check[]): string[] {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks.map((c) => `  ${MARK[c.status] ?? '·'} ${c.name.padEnd(width)}  ${c.detail}`);
}

/** HANDOFF.md sits beside the manifest it was generated from. */
const handoffOf = (manifest: string | null): string | null =>
  manifest === null || !manifest.endsWith('.json')
    ? null
    : join(
        dirname(manifest),
        basename(manifest)
          .replace(/^manifest/, 'HANDOFF')
          .replace(/\.json$/, '.md'),
      );

export const renderVerified: Renderer<Verdict> = (v) => {
  const handoff = handoffOf(v.manifest);
  return [
    `cycle ${v.cycle}${v.leg === 'return' ? ' (return leg)' : ''} verifies against ${v.workspace ?? `its package on '${v.from ?? 'the remote'}'`}; no lease was taken`,
    ...checkLines(v.checks),
    ...(handoff === null ? [] : [`read      ${handoff}`]),
    `next: \`${acceptCommand(v.cycle, { leg: v.leg, from: v.from })}\` takes the lease`,
  ].join('\n');
};

export const renderAccepted: Renderer<Verdict> = (v) => {
  const handoff = handoffOf(v.manifest);
  const token = v.token ?? 'N';
  const you = `you (${v.executor ?? '?'}${v.executor_from === undefined ? '' : `: ${v.executor_from}`})`;
  const lines = [
    v.leg === 'return'
      ? `took the work back: cycle ${v.cycle} is ${v.state ?? 'CLOSED'}; ${you} hold the lease, token ${token}`
      : `accepted cycle ${v.cycle}: ${you} hold the lease, token ${token}`,
    ...checkLines(v.checks),
    ...(handoff === null ? [] : [`read      ${handoff} (the one next action comes first)`]),
  ];
  if (v.note) lines.push(`note: ${v.note}`);
  lines.push(
    v.leg === 'return'
      ? 'next: review the returned work, uncommitted in this work tree (`git status`, `git diff`); the next evacuation starts a new cycle'
      : `next: work, then hand back with \`handoff return --token ${token}\` (or \`handoff close --one-way --token ${token}\` if it does not come back)`,
  );
  return lines.join('\n');
};
