import { GEMINI_GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
import { hookFileEdits, type HookEntry, type HookSpec } from './hook-groups.js';

/**
 * Gemini CLI hooks in its settings.json: the `hooks` object has Claude Code's shape (event → groups
 * with an optional matcher → command hooks) under Gemini's event names. BeforeTool is its
 * PreToolUse, BeforeAgent its UserPromptSubmit, AfterTool its PostToolUse.
 */
export const GEMINI_HOOKS: readonly HookSpec[] = [
  { event: 'BeforeTool', name: 'gemini-guard', matcher: GEMINI_GUARDED_TOOLS_MATCHER },
  { event: 'SessionStart', name: 'gemini-session-start', matcher: null },
  { event: 'BeforeAgent', name: 'gemini-context', matcher: null },
  { event: 'AfterTool', name: 'gemini-context', matcher: null },
];

/** Gemini CLI waits this long for a hook, in milliseconds (its default is a minute); ours answer in well under one second. */
const HOOK_TIMEOUT_MS = 5000;

/** The name Gemini CLI shows in `/hooks panel` and takes in `/hooks disable NAME`. */
const NAMES: Readonly<Record<string, { name: string; description: string }>> = {
  'gemini-guard': { name: 'session-handoff-guard', description: 'session-handoff: refuses file edits to a session that does not hold the lease' },
  'gemini-session-start': { name: 'session-handoff-pickup', description: 'session-handoff: what a ready handoff asks of a new session' },
  'gemini-context': { name: 'session-handoff-stage', description: 'session-handoff: what the current stage asks of this session' },
};

const geminiHookEntry: HookEntry = (spec, command) => ({
  name: NAMES[spec.name]?.name ?? `session-handoff-${spec.name}`,
  type: 'command',
  command,
  timeout: HOOK_TIMEOUT_MS,
  description: NAMES[spec.name]?.description ?? 'session-handoff',
});

/** Gemini CLI settings.json with our hooks merged in (and taken out) as small edits. */
export const GEMINI_HOOK_EDITS = hookFileEdits(GEMINI_HOOKS, geminiHookEntry);
export const mergeGeminiSettings = GEMINI_HOOK_EDITS.merge;
export const unmergeGeminiSettings = GEMINI_HOOK_EDITS.unmerge;
