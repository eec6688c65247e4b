import type { Capsule } from '../schemas/index.js';
import { printable } from './printable.js';

export interface CapsuleQuality {
  readonly score: number;
  readonly max: number;
  /** What keeps the score down, in words a writer can act on. */
  readonly missing: readonly string[];
}

export interface QualityContext {
  /** Which of the capsule's first files exist in the repository (observed by the daemon). */
  readonly existingFiles: ReadonlySet<string>;
  /** When the capsule was last written, and when the stage that asks for it began (PREPARE, else EVACUATE). */
  readonly capsuleUpdatedAt: string | null;
  readonly stageStartedAt: string | null;
}

const NAMES_SOMETHING = [
  /`[^`]+`/, // a command or a path in backticks
  /(?:^|\s)[\w@.-]*\/[\w@./-]+/, // a path with a directory
  /\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|go|rs|rb|java|kt|swift|c|h|cc|cpp|cs|php|sh|md|json|ya?ml|toml|sql|html|css)\b/,
  /\b(?:npm|npx|pnpm|yarn|node|pytest|go test|cargo|make|git|python3?|bash|gradle|mvn|dotnet|bundle|rake|tox)\b/,
  /\btests?\b|\bspec\b/i,
];

/** The agent's paths inside the daemon's reason: a few, each on one printable, bounded line. */
function namesOf(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).map((path) => printable(path, { max: 200 }));
  return `${shown.join(', ')}${paths.length > shown.length ? ` and ${paths.length - shown.length} more` : ''}`;
}

/** A next action a receiver can start on: it names a file, a command or a test. */
export function isActionable(action: string): boolean {
  return NAMES_SOMETHING.some((pattern) => pattern.test(action));
}

/**
 * Six rules, each worth one point: the gaps that make a handoff need "multiple passes". Pure: the
 * daemon observes which files exist and when things happened, this only judges.
 */
export function scoreCapsule(capsule: Capsule | null, context: QualityContext): CapsuleQuality {
  const max = 6;
  if (capsule === null) return { score: 0, max, missing: ['no capsule'] };
  const missing: string[] = [];
  if (!capsule.objective) missing.push('no objective');
  if (!capsule.next_action) missing.push('no next action');
  else if (!isActionable(capsule.next_action)) missing.push('next action vague (name a file, command or test)');
  if (capsule.acceptance_criteria.length === 0) missing.push('no acceptance criteria');
  const absent = capsule.first_files.filter((f) => !context.existingFiles.has(f));
  if (capsule.first_files.length === 0) missing.push('no first files');
  else if (absent.length > 0) missing.push(`first files not in the repository: ${namesOf(absent)}`);
  const worked = capsule.work.completed.length + capsule.work.in_progress.length > 0;
  if (worked && capsule.decisions.length + capsule.do_not_repeat.length === 0) missing.push('work done but no decisions or do-not-repeat');
  const fresh =
    context.stageStartedAt === null || (context.capsuleUpdatedAt !== null && Date.parse(context.capsuleUpdatedAt) >= Date.parse(context.stageStartedAt));
  if (!fresh) missing.push('capsule older than the stage that asked for it');
  return { score: max - missing.length, max, missing };
}

export function describeQuality(quality: CapsuleQuality): string {
  return `capsule ${quality.score}/${quality.max}${quality.missing.length === 0 ? '' : `: ${quality.missing.join('; ')}`}`;
}
