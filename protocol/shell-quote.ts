/**
 * Quotes a path for the copy-paste commands in error hints. Single quotes keep every byte literal in
 * POSIX shells; an embedded quote closes, escapes and reopens.
 */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
