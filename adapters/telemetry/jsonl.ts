import { describeType, invalid, isRecord, parseJson, type JsonRecord, type ShapeSpec } from './shape.js';

export interface JsonLine {
  /** 1-based, as an editor shows it, so an error can point at the line. */
  readonly lineNumber: number;
  readonly value: JsonRecord;
}

/**
 * One JSON object per line. A tailer can catch the writer mid-line, so an unparseable LAST line
 * with no newline after it is a line still being written and is left for the next read. Anywhere
 * else a bad line means the file is not what we think it is, and the payload is refused.
 */
export function parseJsonLines(spec: ShapeSpec, raw: string): JsonLine[] {
  const texts = raw.split('\n');
  const lines: JsonLine[] = [];
  texts.forEach((rawText, index) => {
    const text = rawText.endsWith('\r') ? rawText.slice(0, -1) : rawText;
    if (text.trim() === '') return;
    const lineNumber = index + 1;
    // After a final newline split() yields one more, empty, element: so a non-empty last
    // element is exactly a last line without its newline.
    const unterminated = index === texts.length - 1;
    let value: unknown;
    try {
      value = parseJson(spec, text, `line ${lineNumber}`);
    } catch (error) {
      if (unterminated) return;
      throw error;
    }
    if (!isRecord(value)) throw invalid(spec, `line ${lineNumber} must be a JSON object, got ${describeType(value)}`);
    lines.push({ lineNumber, value });
  });
  return lines;
}
