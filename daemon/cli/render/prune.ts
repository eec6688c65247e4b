import { cycleTime, relativeTime, table, type Renderer } from './format.js';

interface Pruned {
  readonly repo: string;
  readonly remote: string | null;
  readonly dry_run: boolean;
  readonly kept_unfinished: readonly string[];
  readonly kept_foreign: readonly string[];
  readonly cycles: readonly {
    readonly cycle: string;
    readonly local: readonly { readonly ref: string; readonly fate: string; readonly why?: string }[];
    readonly remote: readonly { readonly ref: string; readonly fate: string; readonly why?: string }[];
  }[];
}

const FATE: Readonly<Record<string, string>> = {
  removed: 'removed',
  would_remove: 'would remove',
  kept_checked_out: 'kept: checked out',
  kept_moved: 'kept: moved since read',
  kept_not_taken_back: 'kept: return not taken back',
  kept_look_alike: 'kept: look-alike on the remote',
};

const short = (ref: string) => ref.replace(/^refs\/heads\//, '');

/** `handoff prune`: one row per ref of each finished cycle, where it was, and what became of it. */
export const renderPruned: Renderer<Pruned> = (data, _code, view) => {
  const kept = [
    ...data.kept_unfinished.map((cycle) => `kept ${cycle}: not finished (its branch and refs stay until it closes)`),
    ...data.kept_foreign.map((cycle) => `kept ${cycle}: not started from this checkout (only fetched or received here); its owner prunes it`),
  ];
  if (data.cycles.length === 0) return [`no finished cycle left handoff refs in ${data.repo}`, ...kept].join('\n');
  const rows = data.cycles.flatMap((c) => {
    const age = relativeTime(cycleTime(c.cycle), view.nowMs);
    return [
      ...c.local.map((r) => [c.cycle, age, 'here', short(r.ref), FATE[r.fate] ?? r.fate]),
      ...c.remote.map((r) => [c.cycle, age, data.remote ?? 'remote', short(r.ref), FATE[r.fate] ?? r.fate]),
    ];
  });
  const checkedOut = data.cycles.some((c) => c.local.some((r) => r.fate === 'kept_checked_out'));
  // Each reason once, with the ref it is about: the table has no room for it.
  const reasons = [
    ...new Set(data.cycles.flatMap((c) => [...c.local, ...c.remote].flatMap((r) => (r.why === undefined ? [] : [`${short(r.ref)}: ${r.why}`])))),
  ];
  return [
    ...table(['CYCLE', 'STARTED', 'WHERE', 'REF', 'WHAT'], rows),
    ...kept,
    ...reasons,
    ...(checkedOut ? ['a branch checked out in a worktree is never deleted; switch away from it, then prune again'] : []),
    data.dry_run ? 'dry run: nothing was changed; run without --dry-run to remove these' : '.session-handoff/<cycle>/ files stay: they are the record',
  ].join('\n');
};
