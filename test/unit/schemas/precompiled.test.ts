import { readdirSync } from 'node:fs';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { collectRoutes } from '../../../daemon/http/openapi.js';
import { precompiled } from '../../../daemon/precompiled.js';
import { createAjv } from '../../../daemon/schema-check.js';
import { ConfigSchema, SignalBodySchema } from '../../../schemas/index.js';

// Every schema exported from schemas/ (…Schema), by module and name.
const schemaDir = new URL('../../../schemas/', import.meta.url);
const exported: [string, unknown][] = [];
for (const file of readdirSync(schemaDir)
  .filter((name) => name.endsWith('.schema.ts'))
  .sort()) {
  const module = (await import(new URL(file, schemaDir).href)) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(module)) if (name.endsWith('Schema')) exported.push([`${file} ${name}`, schema]);
}

describe('validators compiled at build time (scripts/emit-validators.mjs)', () => {
  it('every schema a route validates with has one: none is compiled when the daemon starts', async () => {
    const parts = (await collectRoutes()).flatMap((route) => {
      const schema = (route.schema ?? {}) as Record<string, unknown>;
      return ['body', 'querystring', 'params', 'headers']
        .filter((part) => schema[part] !== undefined)
        .map((part) => [`${String(route.method)} ${route.url} ${part}`, schema[part]] as const);
    });
    expect(parts.length).toBeGreaterThan(20);
    for (const [where, schema] of parts) expect(() => precompiled(schema), where).not.toThrow();
  });

  it('every schema exported from schemas/ has one, unless ajv refuses it as a root (then nothing could validate with it)', () => {
    expect(exported.length).toBeGreaterThan(30);
    for (const [name, schema] of exported) {
      let refused = false;
      try {
        createAjv().compile(schema as object);
      } catch {
        refused = true;
      }
      if (!refused) expect(() => precompiled(schema), name).not.toThrow();
    }
  });

  it('a schema the build did not compile fails loudly, naming the fix', () => {
    const inline = Type.Object({ not_in_schemas: Type.String() });
    expect(() => precompiled(inline)).toThrow(/no validator compiled at build time .*not_in_schemas.*npm run build/);
  });

  it('a precompiled validator answers as ajv compiling the schema at run time would: errors, defaults, strictness', () => {
    const samples: [unknown, unknown[]][] = [
      [ConfigSchema, [{}, { pressure: { evacuate_percent: 'high' } }, { nope: 1 }, { pressure: {} }, null]],
      [
        SignalBodySchema,
        [
          {},
          { repo: '/r', source: 'claude-statusline', metric: 'five_hour', used_percent: 101 },
          { repo: '/r', source: 'x', metric: 'five_hour', used_percent: null },
          { repo: 1, extra: true },
        ],
      ],
    ];
    for (const [schema, values] of samples) {
      const runtime = createAjv().compile(schema as object);
      const built = precompiled(schema);
      for (const value of values) {
        const a = structuredClone(value);
        const b = structuredClone(value);
        expect(built(b)).toBe(runtime(a));
        expect(built.errors ?? null).toEqual(runtime.errors ?? null);
        expect(b).toEqual(a);
      }
    }
  });
});
