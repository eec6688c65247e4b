import { CODES, type Code } from './codes.js';
import type { HandoffError } from './errors.js';

/** The shape of every `--json` output and every HTTP body (docs/codes.md, Envelope). */
export interface Envelope<D = unknown> {
  code: Code;
  data: D | null;
  /** A manifest, a status or a pickup never grants permission; only the lease does. */
  authority: 'none';
  error?: { message: string; hint: string };
}

export function success<D>(code: Code, data: D): Envelope<D> {
  return { code, data, authority: 'none' };
}

export function failure(code: Code, message: string, hint: string, data: unknown = null): Envelope {
  return { code, data, authority: 'none', error: { message, hint } };
}

export function fromError(error: HandoffError): Envelope {
  return failure(error.code, error.message, error.hint, error.data);
}

export function exitCodeOf(envelope: Envelope): number {
  return CODES[envelope.code].exit;
}
