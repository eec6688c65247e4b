import { relativeTime, type Renderer } from './format.js';

/** What `handoff lease show` answers (daemon/lease/lease-home.ts). */
export interface LeaseShown {
  readonly workspace: string;
  readonly checkout: string;
  readonly state: string;
  readonly cycle: string | null;
  readonly holder: { readonly executor: string; readonly token: number; readonly acquired_at: string; readonly renewed_at: string } | null;
  readonly last_token: number;
  readonly offered: boolean;
  readonly last_break: { readonly at: string; readonly reason: string; readonly executor: string | null; readonly token: number | null } | null;
}

interface LeaseAnswer {
  readonly workspace: string;
  readonly state: string;
  readonly token?: number;
  readonly changed?: boolean;
  readonly note?: string | null;
  readonly last_break?: LeaseShown['last_break'];
}

const noted = (lines: string[], note: string | null | undefined): string => [...lines, ...(note ? [`note: ${note}`] : [])].join('\n');

/** `handoff lease show`: who holds it, with which token, and where it lives when it is a taken-over cycle's. */
export const renderLease: Renderer<LeaseShown> = (lease, _code, view) => {
  const lines = [
    lease.holder === null
      ? `lease     free (last token ${lease.last_token})${lease.offered ? ' — on offer to a receiver' : ''}`
      : `lease     held by ${lease.holder.executor}, token ${lease.holder.token}, taken ${relativeTime(lease.holder.acquired_at, view.nowMs)} (renewed ${relativeTime(lease.holder.renewed_at, view.nowMs)})`,
  ];
  lines.push(`state     ${lease.state}${lease.cycle === null ? '' : `, cycle ${lease.cycle}`}`);
  if (lease.workspace !== lease.checkout) lines.push(`home      ${lease.workspace} (this checkout took the cycle over; renew and release act there)`);
  if (lease.last_break !== null) {
    const b = lease.last_break;
    lines.push(
      `broken    ${relativeTime(b.at, view.nowMs)} by an operator: ${b.reason}${b.executor === null ? '' : ` (was ${b.executor}, token ${b.token ?? '?'})`}`,
    );
  }
  lines.push(
    lease.holder === null
      ? `next      take it with \`handoff lease acquire --as NAME\``
      : `next      the holder renews with \`handoff lease renew --token ${lease.holder.token}\` and gives it up with \`handoff lease release --token ${lease.holder.token}\``,
  );
  return lines.join('\n');
};

export const renderAcquired: Renderer<LeaseAnswer> = (data) =>
  noted(
    [
      `you hold the lease of ${data.workspace}: token ${data.token ?? '?'} (state ${data.state})`,
      `every later call carries it: \`handoff lease renew --token ${data.token ?? 'N'}\`, and \`handoff lease release --token ${data.token ?? 'N'}\` when you are done`,
    ],
    data.note,
  );

export const renderRenewed: Renderer<LeaseAnswer> = (data) =>
  noted([`renewed: you still hold the lease of ${data.workspace} (state ${data.state}); nothing else changed`], data.note);

export const renderReleased: Renderer<LeaseAnswer> = (data) =>
  noted([`released the lease of ${data.workspace}: it is free; the next holder takes it with \`handoff lease acquire --as NAME\``], data.note);

export const renderBroken: Renderer<LeaseAnswer> = (data) => {
  const b = data.last_break;
  const was = b?.executor ? ` from ${b.executor} (token ${b.token ?? '?'}, now refused)` : '';
  return noted(
    [
      data.changed === false
        ? `the lease of ${data.workspace} was already free; the break is recorded`
        : `broke the lease of ${data.workspace}${was}: it is free`,
      `recorded with the reason "${b?.reason ?? ''}" (shown by \`handoff status\`); the next holder takes it with \`handoff lease acquire --as NAME\``,
    ],
    data.note,
  );
};
