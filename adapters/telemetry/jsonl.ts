import type { SkippedLine } from './adapter-contract.js';
import { describeType, isRecord, parseJson, type JsonRecord, type ShapeSpec } from './shape.js';

export interface JsonLine {
  /** 1-based, as an editor shows it, so an error can point at the line. */
  readonly lineNumber: number;
  readonly value: JsonRecord;
}

export interface JsonLines {
  readonly lines: JsonLine[];
  /** Lines that are not one JSON object: named and left out, so the others still count. */
  readonly skipped: SkippedLine[];
}

/**
 * One JSON object per line. A tailer can catch the writer mid-line, so an unparseable LAST line
 * with no newline after it is a line still being written and is left for the next read, unnamed.
 * Anywhere else a bad line is skipped and reported with its number: one damaged line (a crash
 * mid-write, a stray edit) must not cost the readings of the lines around it.
 */
export function readJsonLines(spec: ShapeSpec, raw: string): JsonLines {
  const texts = raw.split('\n');
  const lines: JsonLine[] = [];
  const skipped: SkippedLine[] = [];
  texts.forEach((rawText, index) => {
    const text = rawText.endsWith('\r') ? rawText.slice(0, -1) : rawText;
    if (text.trim() === '') return;
    const lineNumber = index + 1;
    // After a final newline split() yields one more, empty, element: so a non-empty last
    // element is exactly a last line without its newline.
    const unterminated = index === texts.length - 1;
    let value: unknown;
    try {
      value = parseJson(spec, text, 'the line');
    } catch (error) {
      if (unterminated) return;
      skipped.push({ line: lineNumber, reason: lineReason(spec, error) });
      return;
    }
    if (!isRecord(value)) skipped.push({ line: lineNumber, reason: `not a JSON object (${describeType(value)})` });
    else lines.push({ lineNumber, value });
  });
  return { lines, skipped };
}

/** The refusal's message without the adapter prefix: the report names the adapter already. */
export function lineReason(spec: ShapeSpec, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(`${spec.adapter}: `) ? message.slice(spec.adapter.length + 2) : message;
}
