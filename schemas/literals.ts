import { Type, type SchemaOptions } from '@sinclair/typebox';

/** A closed set of strings, as one JSON Schema `enum` (one clear error) and one TypeScript union. */
export const literals = <const T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] });
