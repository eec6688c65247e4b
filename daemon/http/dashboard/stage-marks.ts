import { STATES, type WorkspaceState } from '../../../protocol/index.js';

const isStage = (value: unknown): value is WorkspaceState => (STATES as readonly unknown[]).includes(value);

/** When a workspace entered a stage: the timeline marks where PREPARE, EVACUATE … began. */
export interface StageMark {
  readonly stage: WorkspaceState;
  readonly at: string;
}

/** Marks kept per workspace: a timeline shows the last hours, not every cycle ever run. */
const MARKS_KEPT = 16;

/**
 * The stage entries of each workspace, in memory, seeded from the journal at start like the
 * readings timeline. Only a change of stage or of its start time adds a mark.
 */
export class StageMarks {
  private readonly workspaces = new Map<string, StageMark[]>();

  record(root: string, stage: WorkspaceState, at: string): void {
    let marks = this.workspaces.get(root);
    if (marks === undefined) {
      marks = [];
      this.workspaces.set(root, marks);
    }
    const last = marks.at(-1);
    if (last !== undefined && last.stage === stage && last.at === at) return;
    marks.push({ stage, at });
    if (marks.length > MARKS_KEPT) marks.splice(0, marks.length - MARKS_KEPT);
  }

  /** From journal records: a snapshot's stage, and every change that set a new one. */
  seed(records: readonly unknown[]): void {
    for (const record of records) {
      const r = record as {
        kind?: unknown;
        root?: unknown;
        set?: { stage?: unknown; stage_since?: unknown };
        context?: { stage?: unknown; stage_since?: unknown };
      } | null;
      if (typeof r?.root !== 'string') continue;
      const held = r.kind === 'workspace' ? r.set : r.kind === 'snapshot' ? r.context : undefined;
      if (isStage(held?.stage) && typeof held.stage_since === 'string') this.record(r.root, held.stage, held.stage_since);
    }
  }

  of(root: string): readonly StageMark[] {
    return [...(this.workspaces.get(root) ?? [])];
  }
}
