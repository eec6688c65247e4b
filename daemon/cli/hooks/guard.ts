import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { printableJson } from '../../../protocol/printable.js';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { CLINE_GUARDED_TOOLS, COPILOT_GUARDED_TOOLS, GEMINI_GUARDED_TOOLS, GUARDED_TOOLS, QWEN_GUARDED_TOOLS } from '../../../adapters/agents/guarded-tools.js';
import { guardVerdict } from './guard-verdict.js';
import { askDaemon } from './lean-client.js';
import { readStdin } from './stdin.js';

/** A tool call waits on this; the daemon answers a status in milliseconds when it is alive. */
const DAEMON_DEADLINE_MS = 2000;
/**
 * How long the daemon may spend reading a travelling lease on the remote for the guard: half the
 * deadline, so a slow remote is answered by `guard_when_lease_unverified`, never by the guard's timeout.
 */
const LEASE_WAIT_MS = 1000;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The repository the tool would change: the file's, which may differ from the session's cwd. */
function targetDir(payload: Json): string {
  const cwd = typeof payload['cwd'] === 'string' ? payload['cwd'] : process.cwd();
  const input = isObject(payload['tool_input']) ? payload['tool_input'] : {};
  // Copilot CLI names the file `path`; the others `file_path` (`notebook_path`: Claude's NotebookEdit).
  const file = input['file_path'] ?? input['notebook_path'] ?? input['path'];
  let dir = typeof file === 'string' && file !== '' ? dirname(resolve(cwd, file)) : cwd;
  // Write may create directories: the nearest one that exists already belongs to the repository.
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

function parse(text: string): Json | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

/** How one agent's before-tool hook protocol names the file tools and takes a denial. */
interface GuardDialect {
  readonly event: string;
  readonly tools: readonly string[];
  deny(reason: string): unknown;
}

/**
 * Claude Code (PreToolUse): `{}` defers to the user's own permission rules; an explicit "allow"
 * would skip them, so the guard never says it.
 */
const CLAUDE: GuardDialect = {
  event: 'PreToolUse',
  tools: GUARDED_TOOLS,
  deny: (reason) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }),
};

/**
 * Gemini CLI (BeforeTool): its stdin has Claude's fields (session_id, cwd, tool_name, tool_input
 * with file_path); a denial is the top-level `decision` with a `reason`, which it sends to the agent
 * as the tool's error. `{}` lets its own policy decide.
 */
const GEMINI: GuardDialect = {
  event: 'BeforeTool',
  tools: GEMINI_GUARDED_TOOLS,
  deny: (reason) => ({ decision: 'deny', reason }),
};

/**
 * GitHub Copilot CLI (PreToolUse in its Claude-format hooks): the payload is Claude's, `tool_input.path`
 * names the file; a denial is its own top-level `permissionDecision`, whose reason it hands the model
 * as the tool's result ("Denied by preToolUse hook: …"). `{}` leaves the call to its permissions.
 */
const COPILOT: GuardDialect = {
  event: 'PreToolUse',
  tools: COPILOT_GUARDED_TOOLS,
  deny: (reason) => ({ permissionDecision: 'deny', permissionDecisionReason: reason }),
};

/** Qwen Code (PreToolUse): Claude's protocol and answer, its own tool ids. */
const QWEN: GuardDialect = { ...CLAUDE, tools: QWEN_GUARDED_TOOLS };

/**
 * Cline CLI, through our plugin's beforeTool (adapters/agents/cline-plugin.ts): the plugin sends
 * Claude's payload; a denial is what its beforeTool returns, `{skip, reason}`, and Cline hands the
 * reason to the model as the skipped call's result.
 */
const CLINE: GuardDialect = { event: 'PreToolUse', tools: CLINE_GUARDED_TOOLS, deny: (reason) => ({ skip: true, reason }) };

async function guard(ctx: HookContext, dialect: GuardDialect): Promise<void> {
  const payload = parse(await readStdin(STDIN_TIMEOUT_MS));
  if (payload === null) {
    const note = `handoff: the ${dialect.event} payload is not a JSON object; the lease guard is not enforcing`;
    ctx.err(note);
    ctx.out(printableJson({ systemMessage: note }));
    return;
  }
  if (typeof payload['tool_name'] !== 'string' || !dialect.tools.includes(payload['tool_name'])) {
    ctx.out('{}');
    return;
  }
  const query = new URLSearchParams({ repo: targetDir(payload), lease_wait_ms: String(LEASE_WAIT_MS) }).toString();
  const answer = await askDaemon(ctx.stateDir, { method: 'GET', path: `/v1/status?${query}` }, DAEMON_DEADLINE_MS);
  const session = typeof payload['session_id'] === 'string' && payload['session_id'] !== '' ? payload['session_id'] : null;
  const verdict = guardVerdict(session, answer);
  if (verdict.allow) {
    if (verdict.note === null) {
      ctx.out('{}');
      return;
    }
    // Both agents show `systemMessage` to the person: a guard that is not enforcing must not be silent.
    ctx.err(verdict.note);
    ctx.out(printableJson({ systemMessage: verdict.note }));
    return;
  }
  ctx.out(printableJson(dialect.deny(verdict.reason)));
}

/** `handoff hook claude-guard` (Claude Code PreToolUse): prints Claude Code's JSON decision. */
export const guardHook = (ctx: HookContext): Promise<void> => guard(ctx, CLAUDE);

/** `handoff hook gemini-guard` (Gemini CLI BeforeTool): prints Gemini CLI's JSON decision. */
export const geminiGuardHook = (ctx: HookContext): Promise<void> => guard(ctx, GEMINI);

/** `handoff hook copilot-guard` (Copilot CLI PreToolUse): prints Copilot's JSON decision. */
export const copilotGuardHook = (ctx: HookContext): Promise<void> => guard(ctx, COPILOT);

/** `handoff hook qwen-guard` (Qwen Code PreToolUse): prints Claude's JSON decision for Qwen's file tools. */
export const qwenGuardHook = (ctx: HookContext): Promise<void> => guard(ctx, QWEN);

/** `handoff hook cline-guard` (the Cline plugin's beforeTool): prints the plugin's answer. */
export const clineGuardHook = (ctx: HookContext): Promise<void> => guard(ctx, CLINE);
