// Writes the JSON Schema files other tools read, from the TypeBox sources (after `npm run build`).
// test/unit/schemas/emitted.test.ts fails when a committed file differs from its source.
import { writeFileSync } from 'node:fs';
import { CapsuleSchema, ManifestSchema } from '../dist/schemas/index.js';

const files = { 'schemas/manifest.schema.json': ManifestSchema, 'schemas/capsule.schema.json': CapsuleSchema };
for (const [path, schema] of Object.entries(files)) {
  writeFileSync(new URL(`../${path}`, import.meta.url), `${JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', ...schema }, null, 2)}\n`);
  console.log(`wrote ${path}`);
}
