import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

/**
 * One ajv configuration for the config file and every HTTP body, so a schema means the same thing
 * wherever it is checked. Defaults are filled in; unknown keys are errors (schemas say so).
 * The daemon never calls this: scripts/emit-validators.mjs compiles every schema with it at build time
 * (daemon/precompiled.ts), and tests use it to check records. So ajv is loaded here, on first call, and
 * not by every process that imports this module.
 */
export function createAjv(options: Options = {}): Ajv {
  const { Ajv } = require('ajv') as typeof import('ajv');
  // ajv-formats ships CommonJS whose default export is the plugin itself.
  const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: true, ...options });
  addFormats(ajv);
  // TypeBox stamps its own metadata keys on schemas; ajv in strict mode must know them.
  ajv.addKeyword('kind').addKeyword('modifier');
  return ajv;
}

/** What identifies a schema's validator: its JSON (TypeBox's symbol keys dropped), hashed. */
export function schemaKey(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/** `body.used_percent must be number or null` style: the field first, so a user sees what to fix. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined, root: string): string {
  if (!errors || errors.length === 0) return `${root} is invalid`;
  const fieldOf = (e: ErrorObject) => (e.instancePath === '' ? root : `${root}${e.instancePath.replace(/\//g, '.')}`);
  // An anyOf failure comes with one error per branch: say it once, as the list of accepted types.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const messages = new Set<string>();
  for (const e of errors) {
    const field = fieldOf(e);
    if (unions.has(e.instancePath) && e.keyword !== 'anyOf') continue;
    if (e.keyword === 'anyOf') {
      const branches = errors.filter((b) => b.instancePath === e.instancePath && b.keyword !== 'anyOf').map((b) => b.message ?? 'valid');
      messages.add(
        `${field} ${branches
          .map((m) => m.replace(/^must be /, ''))
          .join(' or ')
          .replace(/^/, 'must be ')}`,
      );
    } else if (e.keyword === 'additionalProperties') {
      messages.add(`${field} has an unknown field '${String(e.params['additionalProperty'])}'`);
    } else if (e.keyword === 'required') {
      messages.add(`${field} is missing '${String(e.params['missingProperty'])}'`);
    } else if (e.keyword === 'enum') {
      messages.add(`${field} must be one of ${(e.params['allowedValues'] as unknown[]).join(', ')}`);
    } else {
      messages.add(`${field} ${e.message ?? 'is invalid'}`);
    }
  }
  return [...messages].join('; ');
}

export type { ValidateFunction };
