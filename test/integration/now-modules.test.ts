import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const STAGES = fileURLToPath(new URL('../../dist/daemon/cli/commands/stages.js', import.meta.url));

// Module hooks run on their own thread in Node 20: each loaded URL is written straight to stdout.
const HOOKS = `import { writeSync } from 'node:fs';
export async function load(url, context, next) { writeSync(1, url + '\\n'); return next(url, context); }`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** The ES modules `handoff now` loads for its command (the module that registers it, its output and its drain wait). */
function modulesOfNow(): string[] {
  const out = execFileSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '--input-type=module', '-e', `await import(${JSON.stringify(STAGES)})`],
    { encoding: 'utf8' },
  );
  return out.split('\n').filter((line) => line.startsWith('file:'));
}

describe('what `handoff now` loads (docs/performance/evacuation.md)', () => {
  it('follows the drain without the workspace machine: no xstate in the CLI', () => {
    const modules = modulesOfNow();
    expect(modules.some((url) => url.endsWith('/dist/daemon/cli/drain-wait.js'))).toBe(true);
    expect(modules.some((url) => url.endsWith('/dist/protocol/status-words.js'))).toBe(true);
    expect(modules.filter((url) => url.includes('/node_modules/xstate/') || url.endsWith('/dist/protocol/workspace-machine.js'))).toEqual([]);
  });
});
