import type { StatusView } from '../../../protocol/index.js';
import { table, type Renderer } from './format.js';

interface Card {
  readonly root: string;
  readonly status: StatusView;
}

/**
 * `handoff status` outside a repository: every workspace the daemon serves, one line each (where it
 * stands, its worst reading, who holds the lease), so a person sees them all without a `cd`.
 */
export const renderOverview: Renderer<{ readonly workspaces: readonly Card[] }> = (data) => {
  if (data.workspaces.length === 0)
    return 'not inside a git repository, and the daemon serves no workspace yet\nnext: run `handoff status` inside a repository, or pass --repo DIR';
  const rows = data.workspaces.map(({ root, status }) => {
    const worst = status.pressure === null ? 'no reading' : `${status.pressure.percent} % ${status.pressure.metric}`;
    const holder = status.lease.holder;
    const lease = holder === null ? (status.lease.offered ? 'on offer' : 'free') : `${holder.executor} (token ${holder.token})`;
    const state = `${status.state}${status.paused !== null ? ', paused' : ''}${status.blocked !== null ? ', blocked' : ''}`;
    return [root, state, worst, lease];
  });
  return [
    `not inside a git repository; the daemon serves ${data.workspaces.length} workspace${data.workspaces.length === 1 ? '' : 's'}:`,
    ...table(['REPOSITORY', 'STATE', 'WORST READING', 'LEASE'], rows).map((line) => `  ${line}`),
    'next: `handoff status --repo DIR` (or run it inside one) for the whole picture of one',
  ].join('\n');
};
