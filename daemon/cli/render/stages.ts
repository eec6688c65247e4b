// The words' own module, not the barrel: `handoff now` loads this renderer and must not load the machine (now-modules.test.ts).
import { stageMoveWords, stageStartedWords, type StageMove, type StageStarted } from '../../../protocol/stage-move-words.js';
import { offerCarryWords, type OfferCarry } from '../../../protocol/offer-carry.js';
import type { StatusView } from '../../../protocol/index.js';
import type { Renderer } from './format.js';

interface Moved {
  readonly workspace: string;
  readonly state: string;
  readonly changed?: boolean;
  readonly note?: string | null;
  /** What the kill switch holds back (protocol/held-back.ts), when it holds something. */
  readonly held_back?: StageMove;
}

const noted = (lines: string[], note: string | null | undefined): string => [...lines, ...(note ? [`note: ${note}`] : [])].join('\n');

export const renderPrepared: Renderer<Moved> = (data) =>
  noted(
    [
      data.changed === false ? `${data.workspace} is already in ${data.state}; nothing changed` : `${data.workspace} is in PREPARE: work goes on`,
      'next: the agent refreshes its capsule (`handoff capsule set`); `handoff now` evacuates at once, `handoff cancel` goes back to NORMAL',
    ],
    data.note,
  );

export const renderDrained: Renderer<Moved> = (data) =>
  noted(
    [
      data.changed === false
        ? `nothing was waiting for \`handoff drained\` in ${data.workspace} (state ${data.state}); nothing changed`
        : `the agent's step is done: the daemon now checkpoints ${data.workspace}`,
      'next: `handoff status` follows the drain until the handoff is ready',
    ],
    data.note,
  );

export const renderCancelled: Renderer<Moved & { readonly cycle?: string | null }> = (data) =>
  noted(
    [
      `cancelled${data.cycle ? ` cycle ${data.cycle}` : ''}: ${data.workspace} is back in ${data.state}`,
      'refs already made are kept; `handoff list` shows the cycle as abandoned',
    ],
    data.note,
  );

/** `handoff check`: the exit code says it to scripts, this line to people. */
export const renderCheck: Renderer<StatusView> = (view, code) => {
  const cycle = view.cycle?.id ?? '';
  if (code === 'resume_needed')
    return `the evacuation of cycle ${cycle} in ${view.workspace} stopped before it finished\nnext: \`handoff resume\` runs it on from its first unfinished step`;
  if (code === 'cycle_completed')
    return `cycle ${cycle} in ${view.workspace} completed its evacuation (state ${view.state})\nnext: ${view.next[0]?.why ?? 'nothing to do'}`;
  return `nothing is interrupted in ${view.workspace} (state ${view.state})`;
};

export const renderClosed: Renderer<Moved> = (data) =>
  noted(
    [
      data.changed === false ? `${data.workspace} was already ${data.state}; nothing changed` : `closed the cycle: ${data.workspace} is ${data.state}`,
      'the next evacuation starts a new cycle from NORMAL',
    ],
    data.note,
  );

interface PauseAnswer {
  readonly scope: 'global' | 'workspace';
  readonly workspace: string | null;
  readonly reason?: string | null;
  readonly path: string;
  readonly started?: readonly StageStarted[];
  readonly offers?: readonly OfferCarry[];
}

const scopeWords = (data: PauseAnswer) => (data.scope === 'global' ? 'every workspace' : (data.workspace ?? 'this workspace'));

export const renderPaused: Renderer<PauseAnswer> = (data) =>
  [
    `paused ${scopeWords(data)}${data.reason ? ` ("${data.reason}")` : ''}: readings are still recorded, nothing starts or moves`,
    ...(data.offers ?? []).map((offer) => offerCarryWords(offer, true)),
    `next: \`handoff unpause${data.scope === 'global' ? ' --global' : ''}\` lifts it (or remove ${data.path})`,
  ].join('\n');

export const renderUnpaused: Renderer<PauseAnswer> = (data) =>
  [
    `unpaused ${scopeWords(data)}: the daemon acts on readings again (${data.path} is gone)`,
    ...(data.started ?? []).map(stageStartedWords),
    ...(data.started?.length === 0 ? ['nothing was held back: no stage starts'] : []),
    ...(data.offers ?? []).map((offer) => offerCarryWords(offer, false)),
  ].join('\n');

interface SignalAnswer extends Moved {
  readonly key?: string;
}

/** `handoff signal`: whether the number counts, and whether it moved the workspace. */
export const renderSignal: Renderer<SignalAnswer> = (data, code) => {
  if (code === 'reading_not_credible') return `not counted: ${data.note ?? 'the reading is not credible'} (${data.workspace} stays ${data.state})`;
  const [source, metric] = (data.key ?? '').split('/');
  const what = code === 'warning_recorded' ? 'the warning' : metric ? `the ${metric} reading${source ? ` from ${source}` : ''}` : 'the reading';
  const moved =
    data.state === 'EVACUATE' ? '; the daemon is evacuating: `handoff status` follows it' : data.state === 'PREPARE' ? '; the agent refreshes its capsule' : '';
  const held = data.held_back ? `; held by the kill switch: would be ${stageMoveWords(data.held_back)} (\`handoff unpause\` starts it)` : '';
  return noted([`recorded ${what} for ${data.workspace}: state ${data.state}${moved}${held}`], data.note);
};

export const renderDaemonStopped: Renderer<{ readonly pid: number | null; readonly state_dir?: string }> = (data, code) =>
  code === 'daemon_not_running'
    ? `no daemon runs for ${data.state_dir ?? 'this state dir'}: nothing to stop`
    : `stopped the daemon (pid ${data.pid}); \`handoff daemon\` starts it again`;

interface CapsuleSaved extends Moved {
  readonly sha256: string;
}

export const renderCapsuleSaved: Renderer<CapsuleSaved> = (data) =>
  [
    data.changed === false
      ? `the capsule of ${data.workspace} is unchanged (sha256 ${data.sha256.slice(0, 12)})`
      : `saved the capsule to ${data.workspace}/.session-handoff/capsule.json (sha256 ${data.sha256.slice(0, 12)})`,
    'the next handoff package carries it; `handoff status` shows its quality',
  ].join('\n');

export const renderCapsuleShown: Renderer<{ readonly workspace: string; readonly capsule: unknown; readonly error: string | null }> = (data) => {
  if (data.error) return `the capsule of ${data.workspace} is invalid: ${data.error}\nnext: fix it and \`handoff capsule set --file F\``;
  if (data.capsule === null)
    return `${data.workspace} has no capsule yet\nnext: \`handoff capsule template\` prints the skeleton; the agent fills it and runs \`handoff capsule set --file F\``;
  return JSON.stringify(data.capsule, null, 2);
};
