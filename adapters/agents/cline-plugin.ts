import { createHash } from 'node:crypto';
import { CLINE_GUARDED_TOOLS } from './guarded-tools.js';
import { hookCommand, type HookInvocation, type HookName } from './hook-commands.js';

/** Our file among Cline's user plugins (`$CLINE_DIR/plugins`, default `~/.cline/plugins`): it loads every `*.js` there. */
export const CLINE_PLUGIN_FILE = 'session-handoff.js';

/** The hooks the plugin starts, by the key it knows them under. */
export const CLINE_PLUGIN_HOOKS = { guard: 'cline-guard', sessionStart: 'cline-session-start', context: 'cline-context' } as const satisfies Record<
  string,
  HookName
>;

const HEADER = '// session-handoff: the Cline plugin of `handoff install cline` (`handoff uninstall cline` removes it) ';

/**
 * How long the plugin waits for one `handoff hook`. Cline 3.0.x gives a plugin hook 3 s (its
 * `hookTimeoutMs`, which neither a setting nor the environment changes) and then fails the call; the
 * plugin answers first, with its own verdict.
 */
export const CLINE_HOOK_DEADLINE_MS = 2500;

/**
 * The plugin, as Cline loads it (3.0.x: a module whose export has `name`, `manifest` and `hooks`,
 * run in its plugin sandbox process). `beforeRun` gives the model the pickup and the stage notice
 * (`appendContext` reaches it as hook context); `beforeTool` asks the lease guard before an edit and
 * refuses it with `{skip, reason}`: Cline skips that one call and hands the model the reason. Cline's
 * own hook files can only abort the whole run, so the guard lives here. When the guard cannot run at
 * all (the launcher is gone, no answer in time) the edit is refused, saying why: a guard that is
 * silently absent is the failure this protects against. Plain CommonJS without dependencies: Cline
 * compiles each plugin on load, and a small file is what fits in its load timeout.
 */
function pluginBody(invocation: HookInvocation): string {
  const commands = Object.fromEntries(Object.entries(CLINE_PLUGIN_HOOKS).map(([key, name]) => [key, hookCommand(invocation, name)]));
  return `'use strict';
const { spawn } = require('node:child_process');
const COMMANDS = ${JSON.stringify(commands)};
const GUARDED = ${JSON.stringify(CLINE_GUARDED_TOOLS)};
const DEADLINE_MS = ${CLINE_HOOK_DEADLINE_MS};

function ask(command, payload) {
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    let timer;
    const settle = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'ignore'] });
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ failed: 'no answer within ' + DEADLINE_MS + ' ms' });
    }, DEADLINE_MS);
    child.on('error', (error) => settle({ failed: error.message }));
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('close', (code) => {
      if (code !== 0) return settle({ failed: code === 127 ? command + ' was not found' : command + ' exited with ' + code });
      try {
        const answer = out.trim() === '' ? {} : JSON.parse(out);
        settle({ answer: answer !== null && typeof answer === 'object' ? answer : {} });
      } catch (error) {
        settle({ failed: 'its answer is not JSON (' + error.message + ')' });
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(payload));
  });
}

function where(snapshot) {
  const env = globalThis.__clineSessionEnv;
  const cwd = env && typeof env.cwd === 'string' && env.cwd !== '' ? env.cwd : process.cwd();
  const session = snapshot && typeof snapshot.conversationId === 'string' ? snapshot.conversationId : snapshot && snapshot.agentId;
  return { session_id: typeof session === 'string' ? session : '', cwd };
}

module.exports = {
  name: 'session-handoff',
  manifest: { capabilities: ['hooks'] },
  hooks: {
    async beforeRun({ snapshot }) {
      const at = where(snapshot);
      const answers = await Promise.all([
        ask(COMMANDS.sessionStart, { ...at, hook_event_name: 'SessionStart', source: 'startup' }),
        ask(COMMANDS.context, { ...at, hook_event_name: 'UserPromptSubmit' }),
      ]);
      const said = answers.map((a) => (a.answer && typeof a.answer.appendContext === 'string' ? a.answer.appendContext : '')).filter((text) => text !== '');
      return said.length === 0 ? undefined : { appendContext: said.join('\\n\\n') };
    },
    async beforeTool({ snapshot, tool, input }) {
      if (!tool || !GUARDED.includes(tool.name)) return undefined;
      const result = await ask(COMMANDS.guard, { ...where(snapshot), hook_event_name: 'PreToolUse', tool_name: tool.name, tool_input: input });
      if (result.failed !== undefined)
        return { skip: true, reason: 'session-handoff: the lease guard could not run (' + result.failed + '), so no file is changed; \`handoff doctor\` says why' };
      if (result.answer.skip === true) return { skip: true, reason: String(result.answer.reason) };
      return undefined;
    },
  },
};
`;
}

const digest = (body: string): string => createHash('sha256').update(body).digest('hex');

/** The whole file: a header naming it ours, with the digest of the rest (so an edit by hand is told apart). */
export function clinePlugin(invocation: HookInvocation): string {
  const body = pluginBody(invocation);
  return `${HEADER}sha256:${digest(body)}\n${body}`;
}

/** What a file at the plugin's path is: ours as written, ours but edited since, or someone else's. */
export function clinePluginState(text: string): 'ours' | 'edited' | 'other' {
  if (!text.startsWith(HEADER)) return 'other';
  const newline = text.indexOf('\n');
  const stamp = text.slice(HEADER.length, newline < 0 ? undefined : newline);
  return newline >= 0 && stamp === `sha256:${digest(text.slice(newline + 1))}` ? 'ours' : 'edited';
}

/** The hook commands a plugin file of ours starts (for `handoff doctor`); empty for any other file. */
export function clinePluginCommands(text: string): string[] {
  if (clinePluginState(text) === 'other') return [];
  const line = /^const COMMANDS = (.*);$/m.exec(text)?.[1];
  if (line === undefined) return [];
  try {
    const commands: unknown = JSON.parse(line);
    return typeof commands === 'object' && commands !== null ? Object.values(commands).filter((c): c is string => typeof c === 'string') : [];
  } catch (error) {
    if (error instanceof SyntaxError) return [];
    throw error;
  }
}
