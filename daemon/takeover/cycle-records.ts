import { failure, stateOf, statusView, success, type Envelope } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { readAbandoned } from '../evacuation/abandoned-record.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { cycleRevisions, recordedCycles } from './records.js';

/** `handoff list` without --all: the latest cycles of each workspace, newest last. */
const LIST_LATEST = 20;

/** `handoff list` and `handoff show`: the cycles on record, each revision checked. */
export function createCycleRecords(deps: { readonly registry: WorkspaceRegistry; readonly clock: Clock; readonly rootOf: (dir: string) => Promise<string> }) {
  const { registry, clock } = deps;
  return {
    /**
     * Cycles on record in every known workspace (or one), each with its revisions checked: the latest
     * LIST_LATEST of each workspace, or all of them. Checking every manifest ever written would make
     * the everyday answer grow with history.
     */
    async list(repo: string | undefined, all = false): Promise<Envelope> {
      const roots = repo === undefined ? registry.all().map((w) => w.root) : [await deps.rootOf(repo)];
      const cycles = [];
      let total = 0;
      for (const root of roots) {
        const snapshot = registry.find(root)?.snapshot();
        const ids = await recordedCycles(root);
        total += ids.length;
        for (const id of all ? ids : ids.slice(-LIST_LATEST)) {
          const revisions = await cycleRevisions(root, id);
          const current = snapshot?.context.cycle?.id === id ? stateOf(snapshot) : null;
          const abandoned = await readAbandoned(root, id);
          cycles.push({
            cycle: id,
            workspace: root,
            // What the table shows, so --json never says less: the live state, else how the cycle ended.
            state: current ?? (abandoned.length > 0 ? 'abandoned' : 'ended'),
            revisions: revisions.length,
            integrity: revisions.every((r) => r.integrity === 'ok') ? 'ok' : 'failed',
            abandoned: abandoned.length > 0,
          });
        }
      }
      return success('cycles', {
        cycles,
        total,
        ...(cycles.length < total ? { note: `the latest ${LIST_LATEST} of each workspace: ${total} cycles on record (\`handoff list --all\`)` } : {}),
      });
    },

    /** A unique start of a cycle id, among every cycle this daemon knows (on record or under way), as git resolves a short SHA. */
    async resolve(prefix: string): Promise<Envelope> {
      const known = new Set<string>();
      for (const workspace of registry.all()) {
        for (const id of await recordedCycles(workspace.root)) known.add(id);
        const live = workspace.snapshot().context.cycle?.id;
        if (live !== undefined) known.add(live);
      }
      const matches = [...known].filter((id) => id.startsWith(prefix)).sort();
      const [only] = matches;
      if (only !== undefined && matches.length === 1) return success('cycle_resolved', { prefix, cycle: only });
      if (matches.length === 0)
        return failure(
          'unknown_cycle',
          `no cycle starting with ${prefix} on record`,
          '`handoff list` shows the cycles on record; a cycle only on a remote needs its full id',
        );
      return failure('ambiguous', `${prefix} matches ${matches.length} cycles: ${matches.join(', ')}`, 'give more of the id, up to one of those');
    },

    async show(cycle: string): Promise<Envelope> {
      for (const workspace of registry.all()) {
        const ids = await recordedCycles(workspace.root);
        if (!ids.includes(cycle)) continue;
        const snapshot = workspace.snapshot();
        const isCurrent = snapshot.context.cycle?.id === cycle;
        return success('cycle', {
          cycle,
          workspace: workspace.root,
          state: isCurrent ? stateOf(snapshot) : null,
          revisions: await cycleRevisions(workspace.root, cycle),
          // `handoff cancel` records: the out leg's, and each return leg ended.
          abandoned: await readAbandoned(workspace.root, cycle),
          status: isCurrent ? statusView(snapshot, clock.now()) : null,
        });
      }
      return failure('unknown_cycle', `no cycle ${cycle} on record`, '`handoff list` shows the cycles on record');
    },
  };
}
