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

/**
 * HANDOFF.md's daemon-written block on the files the secret scan kept off the checkpoint, near the
 * top so a receiver sees at once what it will not find. Nothing when nothing was withheld.
 */
export function withheldBlock(manifest: Manifest): string[] {
  const withheld = manifest.withheld ?? [];
  if (withheld.length === 0) return [];
  return [
    '## Withheld: files that hold a secret',
    '',
    "The daemon's secret scan (secretlint, recommended rules) found a secret in these files of the source, so the checkpoint does not carry them: an untracked file is absent, a tracked one is at its last committed content. The source's own files are unchanged; get these values from their owner, not from the remote.",
    '',
    ...withheld.map((file) => `- ${codeSpan(file.path, 500)}: ${codeSpan(file.rule, 200)}, ${codeSpan(file.reason, 500)}`),
    '',
    `To include one on purpose, run its line at the root of the source repository; it applies from the next snapshot on (a new revision, the return leg or the next \`handoff now\`), until its line is removed from ${codeSpan(ALLOW_SECRETS_FILE)}:`,
    '',
    '```sh',
    ...withheld.map((file) => includeSecretCommand(file.path)),
    '```',
    '',
  ];
}
