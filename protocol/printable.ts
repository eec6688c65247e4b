/**
 * Text that came from an agent, git, a remote or a file, made safe to show. A terminal interprets
 * control characters (ESC opens CSI/OSC sequences: screen clears, window titles, OSC 52 clipboard
 * writes, hidden text) and a bidirectional override reorders what a reader sees (`…txt.exe` shown as
 * `…exe.txt`). So every such character is shown escaped — `\x1b`, `\u{202e}` — never interpreted.
 * This is the one place that decides what is printable; renderers and output edges call it.
 */

/**
 * C0 controls but tab (and line feed where lines are kept), DEL, C1 controls, the bidi marks,
 * embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the
 * Unicode line and paragraph separators, and lone surrogates (which no encoder can write as they are).
 */
function unsafe(code: number, keepLineFeed: boolean): boolean {
  if (code === 0x09) return false;
  if (code === 0x0a) return !keepLineFeed;
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    (code >= 0xd800 && code <= 0xdfff)
  );
}

/** Every code point but printable ASCII: the candidates `unsafe` decides on (lone surrogates one by one). */
const NOT_PLAIN_ASCII = /[^ -~]/gu;
/** What JSON.stringify leaves raw but a terminal must not see raw (it escapes C0 itself). */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r' };

/** `\x1b` for one byte's worth, `\u{202e}` above: the code point, readable and never interpreted. */
export function escapeCodePoint(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.codePointAt(0) ?? 0;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

export interface PrintableOptions {
  /** Keep line feeds (CRLF becomes LF; a lone CR is escaped). Default: false, the text stays on one line. */
  readonly lines?: boolean;
  /** At most this many characters (after escaping), the cut marked with `…`. */
  readonly max?: number;
}

/** Cuts `text` to at most `max` characters, on a code point boundary, marking the cut. */
export function clipChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  // Never leave half of a surrogate pair at the cut.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** `text` with every control and bidi character escaped; see the module comment. */
export function printable(text: string, options: PrintableOptions = {}): string {
  const lines = options.lines === true;
  const source = lines ? text.replace(/\r\n/g, '\n') : text;
  const safe = source.replace(NOT_PLAIN_ASCII, (ch) => (unsafe(ch.codePointAt(0) ?? 0, lines) ? escapeCodePoint(ch) : ch));
  return options.max === undefined ? safe : clipChars(safe, options.max);
}

/**
 * Every string in a JSON-like value (keys too) through `printable`: for views built from data the
 * daemon got from elsewhere, just before people see them. Not for data that goes on to a program.
 */
export function printableDeep<T>(value: T, options: PrintableOptions = {}): T {
  if (typeof value === 'string') return printable(value, options) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => printableDeep(item, options)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [printable(key, options), printableDeep(item as unknown, options)])) as T;
  }
  return value;
}

/**
 * JSON for a terminal or a pipe: the same value (JSON.parse gives it back exactly), with the
 * characters that JSON.stringify leaves raw — DEL, C1, bidi controls, U+2028/9 — written as `\uXXXX`.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, (ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}
