import type { SkippedLine } from './adapter-contract.js';

export interface JsonText {
  /** 1-based line where the value starts, as an editor shows it. */
  readonly line: number;
  /** Index in the raw text of the value's opening brace, so a caller can cut the text between values. */
  readonly start: number;
  readonly text: string;
}

export interface JsonTexts {
  readonly values: JsonText[];
  readonly skipped: SkippedLine[];
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
/** A JSON array of records (`[`, `,`, `]`) and a byte order mark separate objects without being findings. */
const SEPARATORS: ReadonlySet<number> = new Set([0x2c, 0x5b, 0x5d, 0xfeff]);

/**
 * Top-level JSON objects written one after another, in any layout: one a line (JSONL) or
 * pretty-printed over many lines, as OpenTelemetry's file exporters write them. Text between objects
 * that is not whitespace (or the brackets and commas of an array) is skipped and named by line. An object still open at the end is being
 * written: it is left out, unnamed, for the next read.
 */
export function splitJsonObjects(raw: string): JsonTexts {
  const values: JsonText[] = [];
  const skipped: SkippedLine[] = [];
  let line = 1;
  let depth = 0;
  let start = -1;
  let startLine = 1;
  let inString = false;
  let escaped = false;
  let strayLine = -1;
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw.charCodeAt(i);
    if (c === NEWLINE) line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (depth === 0) {
      if (c === OPEN) {
        depth = 1;
        start = i;
        startLine = line;
      } else if (c > 0x20 && !SEPARATORS.has(c) && strayLine !== line) {
        // Said once per line: a stray line is one finding, not one per character.
        strayLine = line;
        skipped.push({ line, reason: 'not part of a JSON object' });
      }
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN) depth += 1;
    else if (c === CLOSE) {
      depth -= 1;
      if (depth === 0) values.push({ line: startLine, start, text: raw.slice(start, i + 1) });
    }
  }
  return { values, skipped };
}
