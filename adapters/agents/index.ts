export { CLINE_PLUGIN_FILE, CLINE_PLUGIN_HOOKS, clinePlugin, clinePluginCommands, clinePluginState } from './cline-plugin.js';
export { CLAUDE_HOOKS, mergeClaudeSettings, unmergeClaudeSettings } from './claude-settings.js';
export { CODEX_HOOKS, mergeCodexHooks, unmergeCodexHooks } from './codex-hooks.js';
export { codexHookHash, codexHookStates, codexHookTrust, withCodexTrust, type CodexHookTrust, type CodexTrust } from './codex-trust.js';
export { COPILOT_HOOKS, COPILOT_HOOK_EDITS, mergeCopilotSettings, unmergeCopilotSettings } from './copilot-hooks.js';
export { GEMINI_HOOKS, GEMINI_HOOK_EDITS, mergeGeminiSettings, unmergeGeminiSettings } from './gemini-settings.js';
export { QWEN_HOOKS, mergeQwenSettings, unmergeQwenSettings } from './qwen-settings.js';
export {
  CLINE_GUARDED_TOOLS,
  COPILOT_GUARDED_TOOLS,
  GEMINI_GUARDED_TOOLS,
  GEMINI_GUARDED_TOOLS_MATCHER,
  GUARDED_TOOLS,
  GUARDED_TOOLS_MATCHER,
  QWEN_GUARDED_TOOLS,
} from './guarded-tools.js';
export {
  chainedCommand,
  chainedStatusline,
  hookCommand,
  spooledEventCommand,
  isOurHook,
  type HookInvocation,
  type HookName,
  type StatusLineHook,
} from './hook-commands.js';
export { applyInstall, planInstall, previewInstall, type FileChange, type FileOutcome, type InstallPlan } from './install.js';
export { JsonDocument } from './json-document.js';
export { safeTarget, type InstallIo, type PathFacts, type PathKind, type PlannedWrite } from './safe-target.js';
export { AGENT_INSTRUCTIONS } from './instructions.js';
export { unifiedDiff } from './line-diff.js';
export { markedBlock, removeMarkedBlock, upsertMarkedBlock } from './marked-block.js';
export { CAPSULE_COMMAND, CAPSULE_COMMAND_FILE } from './slash-command.js';
export { planUninstall } from './uninstall.js';
export { AGENTS, companionTargets, defaultTarget, type Agent, type Companions } from './targets.js';
export { hookFileEdits, missingHooks, type HookFileEdits, type HookSpec } from './hook-groups.js';
