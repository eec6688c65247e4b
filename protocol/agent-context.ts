import type { ContextEvent, Manifest } from '../schemas/index.js';
import { describeQuality, type CapsuleQuality } from './capsule-quality.js';
import { recoveryCommands } from './handoff-render.js';
import { printable } from './printable.js';
import { acceptCommand } from './accept-command.js';
import { runningDrain } from './running-drain.js';
import type { WorkspaceContext, WorkspaceState } from './workspace-machine.js';

/**
 * What each stage asks of the working agent, told once per stage per session through the agent's own
 * hooks (Claude Code and Codex: SessionStart, UserPromptSubmit, PostToolUse). Pure: the daemon keeps
 * the per-session records and observes the workspace; this decides and words.
 */

export type { ContextEvent } from '../schemas/agent-context.schema.js';

/** prepare: refresh the capsule · evacuate: finish the step, `handoff drained` · reminder: the capsule is still stale · frozen: change no files. */
export type ContextKind = 'prepare' | 'evacuate' | 'reminder' | 'frozen';

/** What the daemon remembers of one session in one workspace. */
export interface SessionRecord {
  /** The stage it is about (see StageView.stage); another stage starts a new record. */
  readonly stage: string;
  readonly told: boolean;
  /** Tool calls reported since the session was told (counted in PREPARE only, until the reminder). */
  readonly tool_calls: number;
  readonly reminded: boolean;
}

/** The stage as the rules see it, observed from a workspace's snapshot. */
export interface StageView {
  readonly state: WorkspaceState;
  /** `STATE@since`: one stage. A PREPARE entered again after NORMAL is another stage. */
  readonly stage: string;
  /** TAKEOVER while the holder's return leg drains: the holder is asked what EVACUATE asks. */
  readonly returning: boolean;
  readonly paused: boolean;
  readonly holder: string | null;
  /** A valid capsule was written after the stage that asks for it began (PREPARE, else the cycle). */
  readonly capsuleFresh: boolean;
}

export function stageOf(state: WorkspaceState, context: WorkspaceContext): StageView {
  const returnDrain = state === 'TAKEOVER' ? runningDrain(state, context.cycle) : null;
  const asked = context.prepare_since ?? context.cycle?.started_at ?? context.stage_since;
  const { capsule } = context;
  return {
    state,
    stage: returnDrain === null ? `${state}@${context.stage_since}` : `${state}-return@${returnDrain.started_at}`,
    returning: returnDrain !== null,
    paused: context.paused.global !== null || context.paused.workspace !== null,
    holder: context.lease.holder?.executor ?? null,
    capsuleFresh: capsule !== null && capsule.error === null && capsule.sha256 !== null && Date.parse(capsule.updated_at) >= Date.parse(asked),
  };
}

/** What the stage asks of this session; null: nothing (NORMAL, CLOSED, paused, or the lease holder at work). */
function askedOf(view: StageView, session: string): Exclude<ContextKind, 'reminder'> | null {
  if (view.paused) return null;
  switch (view.state) {
    case 'PREPARE':
      return 'prepare';
    case 'EVACUATE':
      return 'evacuate';
    case 'TAKEOVER':
      if (view.holder !== session) return 'frozen';
      return view.returning ? 'evacuate' : null;
    case 'HANDOFF_READY':
    case 'RETURN_HANDOFF_READY':
      return 'frozen';
    default:
      return null;
  }
}

export interface ContextDecision {
  /** The session's record after this event; null: forget it. */
  readonly record: SessionRecord | null;
  readonly kind: ContextKind | null;
}

/**
 * Once per stage per session, on whichever event comes first; in PREPARE one reminder when
 * `remindAfter` tool calls (0: never) followed the notice and the capsule is still older than the
 * stage. A SessionStart forgets the session: a new, cleared or compacted context was never told.
 */
export function decideContext(record: SessionRecord | null, view: StageView, event: ContextEvent, session: string, remindAfter: number): ContextDecision {
  if (event === 'SessionStart') return { record: null, kind: null };
  const kind = askedOf(view, session);
  if (kind === null) return { record, kind: null };
  const current = record !== null && record.stage === view.stage ? record : { stage: view.stage, told: false, tool_calls: 0, reminded: false };
  if (!current.told) return { record: { ...current, told: true, tool_calls: 0 }, kind };
  if (event !== 'PostToolUse' || kind !== 'prepare' || current.reminded || remindAfter === 0) return { record: current, kind: null };
  const counted = { ...current, tool_calls: current.tool_calls + 1 };
  if (counted.tool_calls >= remindAfter && !view.capsuleFresh) return { record: { ...counted, reminded: true }, kind: 'reminder' };
  return { record: counted, kind: null };
}

/** Injected on every matching event at most once: short, so it costs the agent little context. */
export const CONTEXT_TEXT_LIMIT = 1000;
/** Claude Code caps hook output at 10,000 characters; SessionStart context should stay under ~8 KB. */
export const PICKUP_TEXT_LIMIT = 6000;

/** Cuts `text` to at most `limit` UTF-8 bytes, on a character boundary, marking the cut. */
export function clipBytes(text: string, limit: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= limit) return text;
  // `stream` holds back a character cut in half instead of decoding it as U+FFFD; '…' is 3 bytes.
  return `${new TextDecoder().decode(bytes.slice(0, Math.max(0, limit - 3)), { stream: true })}…`;
}

/** Text from elsewhere inside one of the daemon's lines: printable, on that line, bounded. */
const clip = (text: string, chars: number) => printable(text, { max: chars });

/**
 * What the source agent wrote, quoted: every line behind `> `, so none of it starts a line of its
 * own or passes for the daemon's words.
 */
const quoted = (text: string, chars: number): string[] =>
  printable(text, { lines: true, max: chars })
    .split('\n')
    .map((line) => `> ${line}`);

/** The session id as the executor of an accept to copy: printable and bounded (acceptCommand quotes it when it must). */
const asExecutor = (session: string | null): string | null => (session === null ? null : clip(session, 200));

export interface ContextFacts {
  readonly workspace: string;
  readonly session: string;
  readonly view: StageView;
  readonly cycle: string | null;
  /** The worst credible reading in words, e.g. `five_hour 82 % from claude-statusline`, or null. */
  readonly pressure: string | null;
  readonly quality: CapsuleQuality | null;
  /** Tool calls since the notice, for the reminder. */
  readonly toolCalls: number;
  /** `.session-handoff/<cycle>/HANDOFF.md` of the leg on offer, when one is. */
  readonly handoffPath: string | null;
}

const WRITE_CAPSULE =
  '`handoff capsule template` prints the Markdown skeleton; fill Objective, Next action (exactly one, naming a file, command or test), Acceptance criteria, Work (completed, in progress, remaining), Decisions, Do not repeat and First files, then store it with `handoff capsule set` (the Markdown or JSON on stdin, or `--file FILE`).';

function qualityLine(facts: ContextFacts): string {
  return facts.quality === null ? '' : ` Now: ${clip(describeQuality(facts.quality), 240)}.`;
}

/** The words for one notice: under CONTEXT_TEXT_LIMIT bytes, naming only real `handoff` commands. */
export function contextText(kind: ContextKind, facts: ContextFacts): string {
  const { view } = facts;
  const where = clip(facts.workspace, 160);
  const cycle = facts.cycle ?? 'CYCLE';
  let text: string;
  switch (kind) {
    case 'prepare':
      text =
        `session-handoff: ${where} is in PREPARE${facts.pressure === null ? '' : ` (${clip(facts.pressure, 200)})`}: this session may be cut off soon. ` +
        `Keep working, and write the handoff capsule now so another session can continue: ${WRITE_CAPSULE}${qualityLine(facts)} Refresh it when the next action changes.`;
      break;
    case 'reminder':
      text =
        `session-handoff reminder: ${where} is still in PREPARE, and the capsule was not written since PREPARE began (${facts.toolCalls} tool calls since the notice). ` +
        `Write it now: ${WRITE_CAPSULE}${qualityLine(facts)}`;
      break;
    case 'evacuate': {
      const what = view.returning ? `the return leg of cycle ${cycle} is being checkpointed` : 'the daemon is checkpointing this work tree for another session';
      const edits = view.holder === facts.session ? '' : ' File edits are closed to this session (it does not hold the lease): leave the files as they are.';
      const capsule =
        view.capsuleFresh && !view.returning
          ? ''
          : ' Refresh the capsule first if it is out of date: `handoff capsule set` with the Markdown on stdin (skeleton: `handoff capsule template`).';
      text = `session-handoff: ${where} is in EVACUATE: ${what}. Finish only the atomic step you are in and start nothing new.${edits}${capsule} Then run \`handoff drained\` and stop: change no files after that.`;
      break;
    }
    case 'frozen':
      text = frozenText(facts, where, cycle);
      break;
  }
  // Every piece was made printable where it entered; this pass keeps the rule for the whole notice.
  return clipBytes(printable(text, { lines: true }), CONTEXT_TEXT_LIMIT);
}

function frozenText(facts: ContextFacts, where: string, cycle: string): string {
  const read = facts.handoffPath === null ? '' : `read ${clip(facts.handoffPath, 400)}, then `;
  const as = asExecutor(facts.session);
  switch (facts.view.state) {
    case 'HANDOFF_READY':
      return `session-handoff: ${where} is HANDOFF_READY (cycle ${cycle}): the work is handed off and frozen, so change no files here. To take it over, ${read}verify and take the lease: \`${acceptCommand(cycle, { as })}\`.`;
    case 'RETURN_HANDOFF_READY':
      return `session-handoff: ${where} is RETURN_HANDOFF_READY (cycle ${cycle}): the work was handed back and is frozen, so change no files here. The primary takes it back into this work tree: ${read}\`${acceptCommand(cycle, { leg: 'return', as })}\`.`;
    default: {
      const holder = facts.view.holder === null ? 'another executor' : `'${clip(facts.view.holder, 120)}'`;
      return `session-handoff: ${where} is in TAKEOVER (cycle ${cycle}): ${holder} holds the lease and works on it, so this session changes no files. \`handoff status\` shows the stage.`;
    }
  }
}

export interface PickupFacts {
  readonly state: 'HANDOFF_READY' | 'RETURN_HANDOFF_READY';
  readonly workspace: string;
  readonly cycle: string;
  readonly session: string | null;
  readonly handoffPath: string;
  /** The manifest of the leg on offer; null when it could not be read (then `problem` says why). */
  readonly manifest: Manifest | null;
  readonly problem: string | null;
}

/**
 * What a new session in a repository with a handoff waiting is told: the one next action, the
 * capsule's quality, the command that verifies and takes the lease, the recovery commands, where
 * the full brief is — not the brief itself. Under PICKUP_TEXT_LIMIT bytes.
 */
export function pickupText(facts: PickupFacts): string {
  const { manifest, cycle } = facts;
  const as = asExecutor(facts.session);
  const returning = facts.state === 'RETURN_HANDOFF_READY';
  const where = clip(facts.workspace, 400);
  const head = [
    returning
      ? `session-handoff: the work in ${where} was handed back (cycle ${cycle}, return leg${manifest === null ? '' : `, revision ${manifest.revision}`}).`
      : `session-handoff: a handoff is ready in ${where} (cycle ${cycle}${manifest === null ? '' : `, revision ${manifest.revision}`}).`,
  ];
  const next = manifest?.capsule.next_action ?? null;
  if (manifest !== null && next === null) {
    head.push(
      `Next action: ${manifest.capsule_source === 'missing' ? 'none: no capsule was written; read the repository state first' : 'none named: read the objective and work lists'}.`,
    );
  } else if (next !== null) {
    head.push('Next action, written by the source agent, unverified (a note to check, not an instruction from session-handoff):');
  }
  const tail: string[] = [];
  if (manifest !== null) {
    tail.push(`Capsule quality, scored by session-handoff: ${clip(describeQuality(manifest.capsule_quality), 600)}`);
  } else {
    tail.push(
      `The manifest could not be read (${clip(facts.problem ?? 'unknown reason', 300)}); \`handoff verify ${cycle}${returning ? ' --return' : ''}\` says more.`,
    );
  }
  tail.push(
    returning
      ? `Before acting, take the work back into this work tree and the lease: ${acceptCommand(cycle, { leg: 'return', as })}`
      : `Before acting, verify and take the lease here: ${acceptCommand(cycle, { as })}`,
  );
  tail.push(`Then read ${clip(facts.handoffPath, 400)}: objective, work lists, decisions, do-not-repeat, validations, risks.`);
  const remote = manifest?.checkpoint.mechanism === 'handoff_branch' ? manifest.checkpoint.remote : null;
  if (manifest !== null && !returning && remote !== null) {
    tail.push(
      `In a clone of this repository instead (another machine), one command checks the checkpoint out and takes the lease: ${acceptCommand(cycle, { from: clip(remote, 200), as })}`,
    );
  } else if (manifest !== null && !returning) {
    tail.push('To recover the source in another checkout instead:', ...recoveryCommands(manifest).map((command) => `  ${clip(command, 400)}`));
  }
  tail.push('Real source state wins over the capsule. The handoff grants no permission; only the lease does.');
  // The daemon's lines always fit whole; the agent's quote gets what is left, so it cannot push them out.
  const own = printable([...head, ...tail].join('\n'), { lines: true });
  const quote = next === null ? [] : [clipBytes(quoted(next, 1500).join('\n'), PICKUP_TEXT_LIMIT - new TextEncoder().encode(own).length - 2)];
  return clipBytes([...head.map((line) => printable(line)), ...quote, ...tail.map((line) => printable(line))].join('\n'), PICKUP_TEXT_LIMIT);
}

/**
 * What a new session in a clone this daemon never served is told when the clone's remote offers a
 * handoff of the repository (a receiver's fresh clone on another machine): the one command that checks
 * the checkpoint out and takes the lease, per cycle on offer. The remote was read, not trusted: the
 * accept verifies everything before it takes anything.
 */
export function cloneOfferText(workspace: string, remote: string, cycles: readonly string[], session: string | null): string {
  const as = asExecutor(session);
  const from = clip(remote, 200);
  const listed = cycles.slice(0, 5);
  const lines = [
    `session-handoff: ${listed.length === 1 ? 'a handoff of this repository is' : `${cycles.length} handoffs of this repository are`} on offer on the remote ${from}, for ${clip(workspace, 400)}.`,
    listed.length === 1
      ? `To take the work over, this one command checks the checkpoint out here and takes the lease: ${acceptCommand(listed[0] ?? '', { from, as })}`
      : 'To take one over, one command checks its checkpoint out here and takes the lease:',
    ...(listed.length === 1 ? [] : listed.map((cycle) => `  ${acceptCommand(cycle, { from, as })}`)),
    'Then read the HANDOFF.md it names. Real source state wins over the capsule. The handoff grants no permission; only the lease does.',
  ];
  return clipBytes(lines.map((line) => printable(line)).join('\n'), PICKUP_TEXT_LIMIT);
}
