import type { Manifest } from '../schemas/index.js';
import { describeQuality } from './capsule-quality.js';
import { shellQuote } from './shell-quote.js';

const bullet = (items: readonly string[], empty = '_none recorded_') => (items.length === 0 ? [empty] : items.map((item) => `- ${item}`));

function section(title: string, lines: readonly string[]): string[] {
  return [`## ${title}`, '', ...lines, ''];
}

/** The exact commands that bring the checkpoint to another checkout; runnable in an empty directory. */
export function recoveryCommands(manifest: Manifest): string[] {
  const { checkpoint, cycle_id: cycle, repository } = manifest;
  const dir = shellQuote(`handoff-${cycle}`);
  if (checkpoint.mechanism === 'capsule_only' || checkpoint.commit === null || checkpoint.remote === null) {
    const from = repository.remote_url ?? '<your clone of this repository>';
    return [`git clone --no-checkout ${shellQuote(from)} ${dir}`, `cd ${dir}`, ...(repository.head ? [`git switch --detach ${repository.head}`] : [])];
  }
  const from = checkpoint.mechanism === 'local_ref' ? checkpoint.remote : (repository.remote_url ?? checkpoint.remote);
  return [
    `git clone --no-checkout ${shellQuote(from)} ${dir}`,
    `cd ${dir}`,
    `git fetch origin ${shellQuote(`${checkpoint.ref}:refs/remotes/origin/${checkpoint.ref?.replace(/^refs\/heads\//, '') ?? ''}`)}`,
    `git switch --detach ${checkpoint.commit}`,
  ];
}

function whereFrom(manifest: Manifest): string[] {
  const { checkpoint, repository } = manifest;
  if (checkpoint.mechanism === 'handoff_branch') {
    return [`The work tree (tracked and untracked files, ignored excluded) is commit \`${checkpoint.commit}\` on \`${checkpoint.ref}\` of remote \`${checkpoint.remote}\` (${repository.remote_url ?? 'url unknown'}); the remote was read back and holds it.`];
  }
  if (checkpoint.mechanism === 'local_ref') {
    return [
      `**Recoverable on this machine only:** the repository has no remote, so the checkpoint is the local ref \`${checkpoint.ref}\` (commit \`${checkpoint.commit}\`) in \`${checkpoint.remote}\`.`,
    ];
  }
  return ['**No checkpoint commit:** the source did not change, so the repository at its recorded HEAD is the state to recover.'];
}

function keepLocalChanges(manifest: Manifest): string[] {
  const { checkpoint, repository } = manifest;
  if (checkpoint.commit === null || repository.head === null) return [];
  const branch = repository.branch ?? 'handoff-work';
  return [
    '',
    `To continue with the changes uncommitted on top of \`${repository.branch ?? repository.head}\`, as the source had them:`,
    '',
    '```sh',
    `git switch -c ${shellQuote(`${branch}-handoff`)} ${checkpoint.commit} && git reset --mixed ${repository.head}`,
    '```',
  ];
}

/**
 * HANDOFF.md: the scan-first view of the manifest. The one next action first, then how to recover
 * the source, what to read, and everything the capsule and the daemon know — missing things said so.
 */
export function renderHandoff(manifest: Manifest): string {
  const { capsule, repository, validations } = manifest;
  const missing = manifest.capsule_source === 'missing';
  const next = capsule.next_action ?? (missing ? 'No capsule was written: read the repository state and the dirty files below before anything else.' : 'The capsule names no next action: read the objective and the work lists.');
  const dirty = repository.dirty;
  const lines: string[] = [
    `# Handoff ${manifest.cycle_id} (${manifest.leg} leg, revision ${manifest.revision})`,
    '',
    `**Next action:** ${next}`,
    '',
    `_${describeQuality(manifest.capsule_quality)}_`,
    '',
    `Authority: none — verify before acting. Only the lease grants permission: run \`handoff accept ${manifest.cycle_id} --as <you>\` in your checkout first.`,
    '',
    ...section('Recover the source', [
      ...whereFrom(manifest),
      '',
      '```sh',
      ...recoveryCommands(manifest),
      '```',
      ...keepLocalChanges(manifest),
    ]),
    ...section('Files to read first', bullet(capsule.first_files.map((f) => `\`${f}\``))),
    ...section('Objective', [capsule.objective ?? (missing ? '_The agent wrote no capsule: objective unknown._' : '_not given_')]),
    ...section('Acceptance criteria', bullet(capsule.acceptance_criteria)),
    ...section('Work', [
      '**Completed**', ...bullet(capsule.work.completed), '',
      '**In progress**', ...bullet(capsule.work.in_progress), '',
      '**Remaining**', ...bullet(capsule.work.remaining), '',
      '**Blocked**', ...bullet(capsule.work.blocked), '',
      '**Deferred**', ...bullet(capsule.work.deferred),
    ]),
    ...section('Decisions', bullet(capsule.decisions)),
    ...section('Do not repeat', bullet([...capsule.do_not_repeat, ...capsule.rejected_approaches.map((r) => `rejected: ${r}`)])),
    ...section('Do not change silently', bullet(capsule.do_not_change_silently)),
    ...section('Validations', validations.map((v) => `- ${v.status.toUpperCase()}${v.command ? ` \`${v.command}\`` : ''}${v.exit_code !== null ? ` (exit ${v.exit_code}, ${v.duration_ms} ms)` : ''}${v.output_tail ? `\n\n  \`\`\`\n${v.output_tail.split('\n').slice(-15).map((l) => `  ${l}`).join('\n')}\n  \`\`\`` : ''}`)),
    ...section('Risks', bullet(capsule.risks)),
    ...section('Assumptions', bullet(capsule.assumptions)),
    ...section('Repository (observed by the daemon)', [
      `- branch: ${repository.branch === null ? '_detached HEAD_' : `\`${repository.branch}\``}; HEAD \`${repository.head ?? 'none (no commits)'}\``,
      `- upstream: ${repository.upstream ?? '_none_'}${repository.ahead !== null ? ` (ahead ${repository.ahead}, behind ${repository.behind})` : ''}`,
      `- operation in progress: ${repository.operation_in_progress ?? 'none'}`,
      `- staged: ${dirty.staged.length}, unstaged: ${dirty.unstaged.length}, untracked: ${dirty.untracked.length}`,
      ...[...new Set([...dirty.staged, ...dirty.unstaged, ...dirty.untracked])].slice(0, 50).map((p) => `  - \`${p}\``),
      `- instruction files: ${repository.instructions.length === 0 ? 'none' : repository.instructions.map((i) => `\`${i.path}\``).join(', ')}`,
    ]),
    ...section('Why this handoff', [
      `${manifest.trigger.kind}: ${manifest.trigger.reason}`,
      ...manifest.trigger.readings.map((r) => `- ${r.metric} ${r.used_percent ?? 'unknown'} % from ${r.source}, observed ${r.observed_at}`),
    ]),
    `Authority: none — verify before acting.`,
    '',
  ];
  return lines.join('\n');
}
