export { mergeClaudeSettings } from './claude-settings.js';
export { GUARDED_TOOLS, GUARDED_TOOLS_MATCHER } from './guarded-tools.js';
export { chainedCommand, chainedStatusline, hookCommand, isOurHook, type HookInvocation, type HookName } from './hook-commands.js';
export { applyInstall, planInstall, previewInstall, type FileOutcome, type InstallIo, type InstallPlan } from './install.js';
export { AGENT_INSTRUCTIONS } from './instructions.js';
export { unifiedDiff } from './line-diff.js';
export { markedBlock, upsertMarkedBlock } from './marked-block.js';
export { AGENTS, defaultTarget, type Agent } from './targets.js';
