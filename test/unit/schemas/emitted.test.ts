import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CapsuleSchema, ManifestSchema } from '../../../schemas/index.js';

describe('the committed JSON Schema files', () => {
  it.each([
    ['schemas/manifest.schema.json', ManifestSchema],
    ['schemas/capsule.schema.json', CapsuleSchema],
  ])('%s equals its TypeBox source (run `npm run schemas` after a change)', (path, schema) => {
    const file = JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8')) as Record<string, unknown>;
    const { $schema, ...rest } = file;
    expect($schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(rest).toEqual(JSON.parse(JSON.stringify(schema)));
  });
});
