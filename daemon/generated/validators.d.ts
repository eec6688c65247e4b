import type { ValidateFunction } from 'ajv';

/**
 * Written by scripts/emit-validators.mjs (`npm run build`) next to this file and into dist/: ajv's
 * standalone code for every schema exported from schemas/, keyed by `schemaKey` (daemon/schema-check.ts).
 */
export declare const validators: ReadonlyMap<string, ValidateFunction>;
