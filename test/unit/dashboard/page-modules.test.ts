import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PAGE_MODULES } from '../../../daemon/http/dashboard/routes.js';

describe('the core modules the dashboard page imports', () => {
  it('have no run-time imports, so a browser loads each alone', () => {
    for (const [name, url] of Object.entries(PAGE_MODULES)) {
      // The file the page is served: tsc's output, where only run-time imports are left.
      const source = readFileSync(fileURLToPath(url), 'utf8');
      const imports = [...source.matchAll(/^(?:import|export)\s(?!type\b)[^;]*\sfrom\s/gm)].map((m) => m[0]);
      expect([name, imports]).toEqual([name, []]);
    }
  });

  it('are the ones app.js imports', () => {
    const app = readFileSync(new URL('../../../daemon/http/dashboard/assets/app.js', import.meta.url), 'utf8');
    const imported = [...app.matchAll(/from '\/dashboard\/lib\/([\w-]+\.js)'/g)].map((m) => m[1]);
    expect(imported.sort()).toEqual(Object.keys(PAGE_MODULES).sort());
  });
});
