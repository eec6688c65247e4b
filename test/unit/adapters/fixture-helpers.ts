import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { expect } from 'vitest';
import type { ParseContext } from '../../../adapters/telemetry/index.js';
import { isHandoffError } from '../../../protocol/errors.js';
import { ReadingSchema, WarningSchema } from '../../../schemas/telemetry.schema.js';
import type { ProviderWarning, Reading } from '../../../schemas/telemetry.schema.js';

/** The reference payloads of docs/telemetry-formats.md, kept in the repository (test/fixtures/reference-telemetry/README.md). */
export const FIXTURES_DIR = new URL('../../fixtures/reference-telemetry/', import.meta.url);

/** 1787220000 s: the fixtures' reference time. Their resets lie in the past today, so time is injected. */
export const FIXTURE_TIME = new Date('2026-08-20T10:00:00Z');
export const CTX: ParseContext = { observedAt: FIXTURE_TIME };
export const FIXTURE_ISO = '2026-08-20T10:00:00.000Z';

export function fixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES_DIR), 'utf8');
}

export function listFixtureFiles(): string[] {
  const root = fileURLToPath(FIXTURES_DIR);
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'README.md')
    .map((entry) => relative(root, `${entry.parentPath}/${entry.name}`))
    .sort();
}

// ajv-formats ships CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false }));
const checkReading = ajv.compile(ReadingSchema);
const checkWarning = ajv.compile(WarningSchema);

/** Every record an adapter emits must pass the schema the daemon validates with. */
export function expectSchemaValid(result: { readings?: Reading[]; warnings?: ProviderWarning[] }): void {
  for (const r of result.readings ?? []) expect(checkReading(r), JSON.stringify(checkReading.errors)).toBe(true);
  for (const w of result.warnings ?? []) expect(checkWarning(w), JSON.stringify(checkWarning.errors)).toBe(true);
}

/** Runs `fn`, expects a HandoffError invalid_body, and returns it for message checks. */
export function expectInvalidBody(fn: () => unknown): { message: string; hint: string } {
  try {
    fn();
  } catch (error) {
    expect(isHandoffError(error), String(error)).toBe(true);
    if (!isHandoffError(error)) throw error;
    expect(error.code).toBe('invalid_body');
    expect(error.hint.length).toBeGreaterThan(0);
    return { message: error.message, hint: error.hint };
  }
  throw new Error('expected an invalid_body HandoffError, nothing was thrown');
}

export function metrics(items: readonly { metric: string }[]): string[] {
  return items.map((item) => item.metric);
}
