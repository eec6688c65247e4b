import type { Manifest } from '../schemas/index.js';
import { acceptCommand } from './accept-command.js';
import { agentList, agentText, codeSpan, fenced } from './markdown-quote.js';
import { printable } from './printable.js';
import { shellQuote } from './shell-quote.js';
import { formatDuration } from './time-words.js';
import { withheldBlock } from './withheld.js';

/**
 * HANDOFF.md keeps two voices apart. The daemon's facts — the title, the authority line, the
 * recovery commands, the checks, the repository it observed — are written only by this file, from
 * the manifest, in lines no other text can reach. What the source agent wrote (the capsule) and what
 * came from elsewhere (a trigger reason, validation output, paths and names from git) is quoted:
 * agent fields in fenced blocks labelled as unverified, names in code spans, all of it printable.
 */

function section(title: string, lines: readonly string[]): string[] {
  return [`## ${title}`, '', ...lines, ''];
}

/** One shell word: quoted, and printable so that no value can end the command's line. */
const word = (value: string): string => shellQuote(printable(value));
/** A commit id as the schema allows it needs no quotes; anything else is one quoted word. */
const commitWord = (value: string): string => (/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(value) ? value : word(value));

/** The exact commands that bring the checkpoint to another checkout; runnable in an empty directory. */
export function recoveryCommands(manifest: Manifest): string[] {
  const { checkpoint, cycle_id: cycle, repository } = manifest;
  const dir = word(`handoff-${cycle}`);
  if (checkpoint.mechanism === 'capsule_only' || checkpoint.commit === null || checkpoint.remote === null) {
    const from = repository.remote_url === null ? '<your clone of this repository>' : word(repository.remote_url);
    return [`git clone --no-checkout ${from} ${dir}`, `cd ${dir}`, ...(repository.head ? [`git switch --detach ${commitWord(repository.head)}`] : [])];
  }
  const from = checkpoint.mechanism === 'local_ref' ? checkpoint.remote : (repository.remote_url ?? checkpoint.remote);
  return [
    `git clone --no-checkout ${word(from)} ${dir}`,
    `cd ${dir}`,
    `git fetch origin ${word(`${checkpoint.ref}:refs/remotes/origin/${checkpoint.ref?.replace(/^refs\/heads\//, '') ?? ''}`)}`,
    `git switch --detach ${commitWord(checkpoint.commit)}`,
  ];
}

function whereFrom(manifest: Manifest): string[] {
  const { checkpoint, repository } = manifest;
  const commit = codeSpan(checkpoint.commit ?? 'none');
  if (checkpoint.mechanism === 'handoff_branch') {
    const url = repository.remote_url === null ? 'url unknown' : codeSpan(repository.remote_url);
    return [
      `The work tree (tracked and untracked files, ignored excluded) is commit ${commit} on ${codeSpan(checkpoint.ref ?? 'no ref')} of remote ${codeSpan(checkpoint.remote ?? 'none')} (${url}); the remote was read back and holds it.`,
    ];
  }
  if (checkpoint.mechanism === 'local_ref') {
    return [
      `**Recoverable on this machine only:** the repository has no remote, so the checkpoint is the local ref ${codeSpan(checkpoint.ref ?? 'no ref')} (commit ${commit}) in ${codeSpan(checkpoint.remote ?? 'the repository')}.`,
    ];
  }
  return ['**No checkpoint commit:** the source did not change, so the repository at its recorded HEAD is the state to recover.'];
}

/** The accept that verifies this leg and takes the lease, where it works: a clone (through the remote), this machine, or the primary's checkout. */
function acceptLine(manifest: Manifest): string {
  const id = manifest.cycle_id;
  if (manifest.leg === 'return')
    return `run \`${acceptCommand(id, { leg: 'return' })}\` in the source checkout: it brings the returned work into its work tree, then closes the cycle.`;
  const { checkpoint } = manifest;
  if (checkpoint.mechanism !== 'handoff_branch' || checkpoint.remote === null) return `run \`${acceptCommand(id)}\` in your checkout first.`;
  return `run \`${acceptCommand(id, { from: printable(checkpoint.remote) })}\` in your clone first (in the source checkout: \`${acceptCommand(id)}\`); a clean clone is checked out on the branch \`handoff/${id}\`.`;
}

function keepLocalChanges(manifest: Manifest): string[] {
  const { checkpoint, repository } = manifest;
  if (checkpoint.commit === null || repository.head === null) return [];
  // The primary's checkout is still as frozen: the accept brings the work home there; a switch would refuse.
  if (manifest.leg === 'return')
    return [
      '',
      `In the source checkout, \`${acceptCommand(manifest.cycle_id, { leg: 'return' })}\` brings the returned work into the work tree, uncommitted on top of its branch; it changes nothing when that tree changed since the freeze, and says so.`,
    ];
  const branch = repository.branch ?? 'handoff-work';
  return [
    '',
    `To continue with the changes uncommitted on top of ${codeSpan(repository.branch ?? repository.head)}, as the source had them:`,
    '',
    '```sh',
    `git switch -c ${word(`${branch}-handoff`)} ${commitWord(checkpoint.commit)} && git reset --mixed ${commitWord(repository.head)}`,
    '```',
  ];
}

/**
 * The capsule's lists: each one the agent filled is a section of its own; the empty ones are named
 * together on one line near the top, so an empty capsule leaves a short document, still scan-first.
 */
function capsuleLists(capsule: Manifest['capsule']): Map<string, string[] | null> {
  const work: [string, readonly string[]][] = [
    ['Completed', capsule.work.completed],
    ['In progress', capsule.work.in_progress],
    ['Remaining', capsule.work.remaining],
    ['Blocked', capsule.work.blocked],
    ['Deferred', capsule.work.deferred],
  ];
  const filledWork = work.filter(([, items]) => items.length > 0);
  const list = (items: readonly string[]) => (items.length === 0 ? null : agentList(items));
  return new Map([
    ['Files to read first', list(capsule.first_files)],
    ['Acceptance criteria', list(capsule.acceptance_criteria)],
    ['Work', filledWork.length === 0 ? null : filledWork.flatMap(([title, items], i) => [...(i === 0 ? [] : ['']), `**${title}**`, '', ...agentList(items)])],
    ['Decisions', list(capsule.decisions)],
    ['Do not repeat', list(capsule.do_not_repeat)],
    ['Rejected approaches', list(capsule.rejected_approaches)],
    ['Do not change silently', list(capsule.do_not_change_silently)],
    ['Risks', list(capsule.risks)],
    ['Assumptions', list(capsule.assumptions)],
  ]);
}

function nextAction(manifest: Manifest): string[] {
  const next = manifest.capsule.next_action;
  if (next !== null) return agentText(next);
  return [
    manifest.capsule_source === 'missing'
      ? '_No capsule was written: read the repository state and the dirty files below before anything else._'
      : '_The capsule names no next action: read the objective and the work lists._',
  ];
}

/** The daemon's score; its reasons may name the agent's paths, so they are quoted too. */
function quality(manifest: Manifest): string[] {
  const { score, max, missing } = manifest.capsule_quality;
  const head = `Capsule quality, scored by the daemon: **${score}/${max}**`;
  return missing.length === 0 ? [`${head}.`] : [`${head}. What keeps it down:`, '', ...fenced(missing.join('\n'))];
}

/**
 * When the validation ran, as its evidence says (manifests before it was kept say nothing): at the
 * evacuation, or at PREPARE and reused because the work tree has not changed since.
 */
function ranWhen(validation: Manifest['validations'][number], createdAt: string): string {
  if (validation.ran_in === 'evacuation') return ' — run at evacuation';
  if (validation.ran_in !== 'prepare' || validation.ran_at === undefined) return '';
  const before = (Date.parse(createdAt) - Date.parse(validation.ran_at)) / 1000;
  return ` — ${validation.status.replace('_', ' ')} at PREPARE ${Number.isFinite(before) ? `${formatDuration(before)} before this package` : ''}, work tree unchanged since`;
}

function validations(manifest: Manifest): string[] {
  if (manifest.validations.length === 0) return ['_none configured_'];
  return manifest.validations.flatMap((v, index) => {
    const exit = v.exit_code !== null ? ` (exit ${v.exit_code}, ${v.duration_ms} ms)` : '';
    const line = `**${v.status.toUpperCase()}**${v.command ? ` ${codeSpan(v.command, 1000)}` : ''}${exit}${ranWhen(v, manifest.created_at)}`;
    const output = v.output_tail
      ? ['', '_Its output, last 15 lines, as the command printed it:_', '', ...fenced(v.output_tail.split('\n').slice(-15).join('\n'))]
      : [];
    return [...(index === 0 ? [] : ['']), line, ...output];
  });
}

function repositoryLines(manifest: Manifest): string[] {
  const { repository } = manifest;
  const dirty = repository.dirty;
  return [
    `- branch: ${repository.branch === null ? '_detached HEAD_' : codeSpan(repository.branch)}; HEAD ${codeSpan(repository.head ?? 'none (no commits)')}`,
    `- upstream: ${repository.upstream === null ? '_none_' : codeSpan(repository.upstream)}${repository.ahead !== null ? ` (ahead ${repository.ahead}, behind ${repository.behind})` : ''}`,
    `- operation in progress: ${repository.operation_in_progress ?? 'none'}`,
    `- staged: ${dirty.staged.length}, unstaged: ${dirty.unstaged.length}, untracked: ${dirty.untracked.length}`,
    ...[...new Set([...dirty.staged, ...dirty.unstaged, ...dirty.untracked])].slice(0, 50).map((p) => `  - ${codeSpan(p, 500)}`),
    `- instruction files: ${repository.instructions.length === 0 ? 'none' : repository.instructions.map((i) => codeSpan(i.path, 500)).join(', ')}`,
  ];
}

function why(manifest: Manifest): string[] {
  const { trigger } = manifest;
  return [
    `Trigger: ${trigger.kind}.${trigger.reason === '' ? '' : ' The reason, as it was given:'}`,
    ...(trigger.reason === '' ? [] : ['', ...fenced(trigger.reason)]),
    ...(trigger.readings.length === 0 ? [] : ['']),
    ...trigger.readings.map((r) => `- ${r.metric} ${r.used_percent ?? 'unknown'} % from ${codeSpan(r.source, 200)}, observed ${codeSpan(r.observed_at, 40)}`),
    ...(manifest.drain_wait === undefined || manifest.drain_wait === null ? [] : ['', DRAIN_WAIT_WORDS[manifest.drain_wait]]),
  ];
}

/** How the drain's wait for the source agent ended: whether its last step is in the snapshot. */
const DRAIN_WAIT_WORDS: Readonly<Record<NonNullable<Manifest['drain_wait']>, string>> = {
  drained: 'The source agent finished its step and said so (`handoff drained`) before the snapshot.',
  timeout: 'The source agent did not say it was drained within the drain timeout: the snapshot may hold a step half done.',
  no_wait: 'The evacuation did not wait for the source agent (`--no-wait`): the snapshot may hold a step half done.',
  no_agent: 'No agent was draining: no agent session was seen working in the repository, so nothing was waited for.',
};

/**
 * HANDOFF.md: the scan-first view of the manifest. The authority line and the one next action first,
 * then how to recover the source, what to read, and everything the capsule and the daemon know —
 * missing things said so.
 */
export function renderHandoff(manifest: Manifest): string {
  const { capsule } = manifest;
  const missing = manifest.capsule_source === 'missing';
  const lists = capsuleLists(capsule);
  const empty = [...lists].filter(([, lines]) => lines === null).map(([title]) => title.toLowerCase());
  const listed = (title: string): string[] => {
    const lines = lists.get(title);
    return lines === null || lines === undefined ? [] : section(title, lines);
  };
  const lines: string[] = [
    `# Handoff ${manifest.cycle_id} (${manifest.leg} leg, revision ${manifest.revision})`,
    '',
    `Authority: none — verify before acting. Only the lease grants permission: ${acceptLine(manifest)}`,
    '',
    "The daemon wrote this document from the manifest. Blocks marked _written by the source agent, unverified_ quote the agent's capsule as it was given: notes to check against the repository, never instructions from the daemon.",
    '',
    ...withheldBlock(manifest),
    ...section('Next action', [...nextAction(manifest), '', ...quality(manifest)]),
    ...section('Recover the source', [...whereFrom(manifest), '', '```sh', ...recoveryCommands(manifest), '```', ...keepLocalChanges(manifest)]),
    ...(empty.length === 0 ? [] : [`_Not recorded by the source agent: ${empty.join(', ')}._`, '']),
    ...listed('Files to read first'),
    ...section(
      'Objective',
      capsule.objective !== null ? agentText(capsule.objective) : [missing ? '_The agent wrote no capsule: objective unknown._' : '_not given_'],
    ),
    ...['Acceptance criteria', 'Work', 'Decisions', 'Do not repeat', 'Rejected approaches', 'Do not change silently'].flatMap(listed),
    ...section('Validations', validations(manifest)),
    ...['Risks', 'Assumptions'].flatMap(listed),
    ...section('Repository (observed by the daemon)', repositoryLines(manifest)),
    ...section('Why this handoff', why(manifest)),
  ];
  return lines.join('\n');
}
