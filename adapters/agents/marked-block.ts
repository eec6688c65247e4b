import { HandoffError } from '../../protocol/errors.js';

/**
 * A block of ours inside a file the user owns (AGENTS.md, a .clinerules file): everything between the
 * markers is ours and replaced on every install; everything outside is the user's and never touched.
 */
const BEGIN = '<!-- session-handoff:begin (managed by `handoff install`; edits inside are replaced) -->';
const END = '<!-- session-handoff:end -->';
const BEGIN_PREFIX = '<!-- session-handoff:begin';

export function markedBlock(body: string): string {
  return `${BEGIN}\n${body.trimEnd()}\n${END}\n`;
}

/** The text with our block in place: replaced where the markers are, else appended after a blank line. */
export function upsertMarkedBlock(before: string | null, body: string, path: string): string {
  const block = markedBlock(body);
  if (before === null || before.trim() === '') return block;
  const start = before.indexOf(BEGIN_PREFIX);
  if (start < 0) {
    const separator = before.endsWith('\n\n') ? '' : before.endsWith('\n') ? '\n' : '\n\n';
    return `${before}${separator}${block}`;
  }
  const end = before.indexOf(END, start);
  // Guessing where a damaged block ends could eat the user's own lines.
  if (end < 0) {
    throw new HandoffError(
      'install_refused',
      `${path} has a session-handoff begin marker without its end marker`,
      `restore or remove the block by hand (the line starting with ${BEGIN_PREFIX}), then install again; nothing was changed`,
    );
  }
  let after = end + END.length;
  if (before[after] === '\n') after += 1;
  return `${before.slice(0, start)}${block}${before.slice(after)}`;
}

/**
 * The text without our block (null: there is none), and without the blank line install put before
 * it at the end of the file; an empty result means the file held nothing else.
 */
export function removeMarkedBlock(before: string, path: string): string | null {
  const start = before.indexOf(BEGIN_PREFIX);
  if (start < 0) return null;
  const end = before.indexOf(END, start);
  if (end < 0) {
    throw new HandoffError(
      'install_refused',
      `${path} has a session-handoff begin marker without its end marker`,
      `remove the block by hand (from the line starting with ${BEGIN_PREFIX}); nothing was changed`,
    );
  }
  let after = end + END.length;
  if (before[after] === '\n') after += 1;
  const head = before.slice(0, start);
  const tail = before.slice(after);
  return `${tail === '' && head.endsWith('\n\n') ? head.slice(0, -1) : head}${tail}`;
}
