import { printable } from './printable.js';

/**
 * Quoting for Markdown the daemon writes (HANDOFF.md): text it did not write itself is data, never
 * structure. A fenced block whose fence is longer than any backtick run inside cannot be closed by
 * its content, so nothing in it opens a heading, starts a list or ends the block; an inline code span
 * built the same way cannot close early, and one line of printable text cannot start a line of its own.
 */

const longestBacktickRun = (text: string): number => [...text.matchAll(/`+/g)].reduce((longest, m) => Math.max(longest, m[0].length), 0);

/** `text` as a fenced code block (one array entry per line), every line printable. */
export function fenced(text: string, info = 'text'): string[] {
  const body = printable(text, { lines: true });
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(body) + 1));
  return [`${fence}${info}`, ...body.split('\n'), fence];
}

/** A single line as an inline code span: printable, at most `max` characters, never closed early. */
export function codeSpan(text: string, max = 300): string {
  const body = printable(text, { max });
  const fence = '`'.repeat(longestBacktickRun(body) + 1);
  // A span that starts or ends with a backtick (or a space) needs a space inside its fence.
  const pad = /^[`\s]|[`\s]$/.test(body) ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** The label above every block an agent wrote: what it is, and that nobody checked it. */
export const AGENT_LABEL = '_Written by the source agent, unverified:_';

/** One agent-written field: the label and the quoted text. */
export function agentText(text: string): string[] {
  return [AGENT_LABEL, '', ...fenced(text)];
}

/** An agent-written list: one fenced block, an item per `- ` line, continuation lines indented. */
export function agentList(items: readonly string[]): string[] {
  return agentText(items.map((item) => `- ${item.replace(/\r\n?|\n/g, '\n  ')}`).join('\n'));
}
