import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../../dist/daemon/main.js', import.meta.url));

// Module hooks run on their own thread in Node 20: each loaded URL is written straight to stdout.
const HOOKS = `import { writeSync } from 'node:fs';
export async function load(url, context, next) { writeSync(1, url + '\\n'); return next(url, context); }`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** The ES modules a daemon process holds once its code is loaded (dist/daemon/main.js), before it does anything. */
function modulesOfTheDaemon(): string[] {
  const out = execFileSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '--input-type=module', '-e', `await import(${JSON.stringify(MAIN)})`],
    {
      encoding: 'utf8',
    },
  );
  return out.split('\n').filter((line) => line.startsWith('file:'));
}

describe('what an idle daemon loads (docs/performance/daemon.md)', () => {
  it('holds the API and the tails, but not the secret scanner: secretlint is loaded by the first scan', () => {
    const modules = modulesOfTheDaemon();
    expect(modules.some((url) => url.endsWith('/dist/daemon/http/build-server.js'))).toBe(true);
    expect(modules.some((url) => url.endsWith('/dist/daemon/ingest/codex-watch.js'))).toBe(true);
    expect(modules.filter((url) => url.includes('/node_modules/@secretlint/') || url.endsWith('/dist/daemon/evacuation/secret-scan.js'))).toEqual([]);
  });
});
