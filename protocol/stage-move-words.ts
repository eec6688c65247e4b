import type { WorkspaceState } from './workspace-machine.js';

// The words alone, without the machine: `handoff now` and status print them and must not load xstate (now-modules.test.ts).

/** A stage the readings call for, with the reading that calls for it (null when a reading did not). */
export interface StageMove {
  readonly state: WorkspaceState;
  readonly metric: string | null;
  readonly percent: number | null;
  readonly source: string | null;
}

/** "EVACUATE: five_hour 95 %" — the stage and the reading that calls for it. */
export function stageMoveWords(move: StageMove): string {
  return `${move.state}${callWords(move)}`;
}

const callWords = (move: StageMove): string => (move.percent === null ? '' : `: ${move.metric} ${move.percent} %`);

/** A stage that started when the kill switch was lifted, in the workspace it started in. */
export interface StageStarted extends StageMove {
  readonly workspace: string;
  readonly cycle: string | null;
}

/** What `handoff unpause` started: "EVACUATE starts now: five_hour 95 %; pushing handoff/<cycle> …". */
export function stageStartedWords(started: StageStarted): string {
  const what = `${started.state} starts now in ${started.workspace}${callWords(started)}`;
  if (started.state === 'EVACUATE') return `${what}; the daemon checkpoints the work onto handoff/${started.cycle ?? '…'} — \`handoff status\` follows it`;
  if (started.state === 'PREPARE') return `${what}; the agent refreshes its capsule`;
  return what;
}
