import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../schemas/index.js';

/** Every config key, nested ones as `parent.child`, from the schema that validates the file. */
function keys(properties: Record<string, { properties?: Record<string, unknown> }>, prefix = ''): string[] {
  return Object.entries(properties).flatMap(([name, schema]) =>
    schema.properties ? keys(schema.properties as Record<string, { properties?: Record<string, unknown> }>, `${prefix}${name}.`) : [`${prefix}${name}`],
  );
}

describe('docs/configuration.md', () => {
  it('documents every config key of the schema, and no other', () => {
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    // The key table: from its header row to the first blank line.
    const table = doc.slice(doc.indexOf('| key | default | meaning |')).split('\n\n')[0] ?? '';
    const documented = [...table.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(keys(ConfigSchema.properties as never).sort());
  });
});
