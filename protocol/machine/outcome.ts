import type { Code } from '../codes.js';
import type { Outcome } from './context.js';

export function done(code: Code, data: Record<string, unknown> | null = null, changed = true): Outcome {
  return { code, message: null, hint: null, data, changed };
}

export function refused(code: Code, message: string, hint: string): Outcome {
  return { code, message, hint, data: null, changed: false };
}
