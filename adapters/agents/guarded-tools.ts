/**
 * The Claude Code tools the lease guard checks: the ones whose effect on files is known from their
 * name. Bash is left out on purpose: the agent needs it to run `handoff drained` and `handoff status`
 * during EVACUATE, and a shell command's effect on files cannot be told from its text. The lease, not
 * this guard, is the authority. No imports: the guard hook loads this on every file edit.
 */
export const GUARDED_TOOLS: readonly string[] = ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'];

/** The PreToolUse matcher the installer writes: the same tools. */
export const GUARDED_TOOLS_MATCHER = GUARDED_TOOLS.join('|');

/**
 * Gemini CLI's file-changing tools (its EDIT_TOOL_NAMES): `write_file` and `replace`, both with a
 * `file_path` argument. `run_shell_command` is left out for the reason Bash is.
 */
export const GEMINI_GUARDED_TOOLS: readonly string[] = ['write_file', 'replace'];

/** Gemini CLI matches a BeforeTool matcher as a regular expression: anchored, so no other tool whose name contains one of these runs the hook. */
export const GEMINI_GUARDED_TOOLS_MATCHER = `^(${GEMINI_GUARDED_TOOLS.join('|')})$`;

/**
 * GitHub Copilot CLI's file tools as its PascalCase (Claude-format) hooks name them: `create` arrives
 * as `Write`, `edit` as `Edit`, each with a `path` argument. `bash` is left out for the reason Bash is.
 */
export const COPILOT_GUARDED_TOOLS: readonly string[] = ['Write', 'Edit'];

/** Copilot CLI matches a hook's matcher against the whole tool name (a full regex match). */
export const COPILOT_GUARDED_TOOLS_MATCHER = COPILOT_GUARDED_TOOLS.join('|');

/**
 * Qwen Code's file tools (runtime ids, each with `file_path`): `write_file`, `edit`, `notebook_edit`.
 * `run_shell_command` is left out for the reason Bash is.
 */
export const QWEN_GUARDED_TOOLS: readonly string[] = ['write_file', 'edit', 'notebook_edit'];

/** Qwen Code's matcher is an unanchored regular expression: anchored here, so `edit` is not also any name containing it. */
export const QWEN_GUARDED_TOOLS_MATCHER = `^(${QWEN_GUARDED_TOOLS.join('|')})$`;

/**
 * Cline CLI's file tools (3.0.x): `editor` (a `path` argument) and `apply_patch` (the patch text names
 * its files; the guard then asks for the session's repository). `run_commands` is left out for the
 * reason Bash is.
 */
export const CLINE_GUARDED_TOOLS: readonly string[] = ['editor', 'apply_patch'];
