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
