import type { Code } from './codes.js';

/**
 * An expected failure with a registry code, a message that says what happened and a hint that says
 * what to do. Thrown by any layer; only the CLI entry and the HTTP error handler turn it into an
 * exit code or a status.
 */
export class HandoffError extends Error {
  readonly code: Code;
  readonly hint: string;
  readonly data: Record<string, unknown> | null;

  constructor(code: Code, message: string, hint: string, data: Record<string, unknown> | null = null) {
    super(message);
    this.name = 'HandoffError';
    this.code = code;
    this.hint = hint;
    this.data = data;
  }
}

export function isHandoffError(value: unknown): value is HandoffError {
  return value instanceof HandoffError;
}
