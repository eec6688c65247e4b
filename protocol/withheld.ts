import type { Manifest } from '../schemas/index.js';
import { codeSpan } from './markdown-quote.js';
import { printable } from './printable.js';
import { shellQuote } from './shell-quote.js';

/**
 * The user's deliberate list of files to push although the secret scan finds something in them:
 * one literal path per line, relative to the repository root. It sits in the excluded
 * `.session-handoff/`, so it never travels; only the user writes it.
 */
export const ALLOW_SECRETS_FILE = '.session-handoff/allow-secrets';

/** The exact command that includes one withheld file on purpose, from the next snapshot on. */
export function includeSecretCommand(path: string): string {
  return `mkdir -p .session-handoff && printf '%s\\n' ${shellQuote(printable(path))} >> ${ALLOW_SECRETS_FILE}`;
}

/** What a record carries in place of a secret the scan found in it: the rule that matched, never the text. */
export const withheldMarker = (rule: string): string => `[withheld: secretlint rule ${rule}]`;

/** A text (a withheld file's shown path) in which a secret was replaced by its marker. */
export const holdsMarker = (text: string): boolean => text.includes('[withheld: secretlint rule ');

/** One finding in a text, as offsets into it (end exclusive). */
export interface TextHit {
  readonly rule: string;
  readonly start: number;
  readonly end: number;
}

/**
 * The text with each hit replaced by its rule's marker. Overlapping hits merge into one marker (the
 * first rule's), so no part of either secret is left between two markers.
 */
export function redactHits(text: string, hits: readonly TextHit[]): string {
  const sorted = [...hits].filter((hit) => hit.end > hit.start).sort((a, b) => a.start - b.start || b.end - a.end);
  let result = '';
  let at = 0;
  let open: { rule: string; end: number } | null = null;
  for (const hit of sorted) {
    if (open !== null && hit.start < open.end) {
      open.end = Math.max(open.end, hit.end);
      continue;
    }
    if (open !== null) {
      result += withheldMarker(open.rule);
      at = open.end;
    }
    result += text.slice(at, hit.start);
    open = { rule: hit.rule, end: hit.end };
  }
  if (open !== null) {
    result += withheldMarker(open.rule);
    at = open.end;
  }
  return result + text.slice(at);
}

const UNSCANNED_WORDS: Readonly<Record<string, string>> = {
  binary: 'binary',
  too_large: 'larger than secret_scan.max_file_bytes',
  unreadable: 'unreadable by the daemon (git could not add it either)',
};

/**
 * HANDOFF.md's daemon-written block on what the secret scan decided, near the top so a receiver sees
 * at once what it will not find: the files kept off the checkpoint, the files pushed on purpose or
 * unscanned, and an allow list ignored because the remote could have supplied it. Nothing when
 * there is nothing to say.
 */
export function withheldBlock(manifest: Manifest): string[] {
  const withheld = manifest.withheld ?? [];
  const scan = manifest.secret_scan ?? { allow_list: 'absent', allowed: [], unscanned: [] };
  const ignored = scan.allow_list === 'ignored';
  if (withheld.length === 0 && scan.allowed.length === 0 && scan.unscanned.length === 0 && !ignored) return [];
  // A name holding a secret is shown with its marker: it cannot be included, so it has no command.
  const includable = withheld.filter((file) => !holdsMarker(file.path));
  const lines = [withheld.length > 0 ? '## Withheld: files that hold a secret' : '## Secret scan', ''];
  if (withheld.length > 0) {
    lines.push(
      "The daemon's secret scan (secretlint, recommended rules and the kubeconfig and .netrc patterns) found a secret in these files of the source, or in their names, or a `secretlint-disable` comment HEAD does not have, so the checkpoint does not carry them: an untracked file is absent, a tracked one is at its last committed content. The source's own files are unchanged; get these values from their owner, not from the remote.",
      '',
      ...withheld.map((file) => `- ${codeSpan(file.path, 500)}: ${codeSpan(file.rule, 200)}, ${codeSpan(file.reason, 500)}`),
      '',
    );
  }
  if (includable.length > 0) {
    lines.push(
      `To include one on purpose, run its line at the root of the source repository; it applies from the next snapshot on (a new revision, the return leg or the next \`handoff now\`), until its line is removed from ${codeSpan(ALLOW_SECRETS_FILE)}:`,
      '',
      '```sh',
      ...includable.map((file) => includeSecretCommand(file.path)),
      '```',
      '',
    );
  }
  if (scan.allowed.length > 0) {
    lines.push(
      `Pushed on purpose although the scan found a secret in them (listed in the source's ${codeSpan(ALLOW_SECRETS_FILE)}):`,
      '',
      ...scan.allowed.map((path) => `- ${codeSpan(path, 500)}`),
      '',
    );
  }
  if (scan.unscanned.length > 0) {
    lines.push('Pushed without a scan:', '', ...scan.unscanned.map((file) => `- ${codeSpan(file.path, 500)}: ${UNSCANNED_WORDS[file.why] ?? file.why}`), '');
  }
  if (ignored) {
    lines.push(
      `The source's ${codeSpan(ALLOW_SECRETS_FILE)} was ignored: it is tracked or in a commit, so the remote could have written it. Only an untracked list that no commit holds is read.`,
      '',
    );
  }
  return lines;
}
