import type { ValidateFunction } from 'ajv';
import { validators } from './generated/validators.js';
import { schemaKey } from './schema-check.js';

/**
 * The validator compiled at build time (scripts/emit-validators.mjs, with `createAjv`'s options) for
 * exactly this schema. Keyed by content, so a schema changed since the last build, or one defined
 * outside schemas/, has none and fails here, at start-up, instead of silently compiling at run time.
 */
export function precompiled<T = unknown>(schema: unknown): ValidateFunction<T> {
  const validate = validators.get(schemaKey(schema));
  if (validate === undefined) {
    const id = JSON.stringify(schema).slice(0, 160);
    throw new Error(
      `no validator compiled at build time for the schema ${id}…: define it in schemas/ (exported as …Schema) and run \`npm run build\` (scripts/emit-validators.mjs)`,
    );
  }
  return validate as ValidateFunction<T>;
}
