import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { appliesLive, configKeys } from '../../../daemon/config.js';

describe('docs/configuration.md', () => {
  const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  // The key table: from its header row to the first blank line.
  const table = doc.slice(doc.indexOf('| key | default | applies | meaning |')).split('\n\n')[0] ?? '';
  const rows = [...table.matchAll(/^\| `([a-z_.]+)` \| [^|]+ \| (live|next start) \|/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);

  it('documents every config key of the schema, and no other', () => {
    expect(rows.map(([key]) => key).sort()).toEqual(configKeys().sort());
  });

  it('says per key whether `handoff config set` applies it live, as the daemon does', () => {
    expect(rows.map(([key, applies]) => [key, applies === 'live'])).toEqual(rows.map(([key]) => [key, appliesLive(key)]));
  });
});
