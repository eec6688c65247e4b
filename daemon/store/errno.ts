/** The `code` of a Node system error (`ENOENT`, `EEXIST`…), or undefined for anything else. */
export function errnoOf(error: unknown): string | undefined {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}

export function isErrno(error: unknown, ...codes: readonly string[]): boolean {
  const code = errnoOf(error);
  return code !== undefined && codes.includes(code);
}
