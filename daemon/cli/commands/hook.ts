import type { Command } from 'commander';
import type { GlobalOptions } from '../context.js';
import { runHook } from '../hook-entry.js';

/**
 * `handoff hook NAME` normally never reaches commander: the CLI entry answers it first, for speed.
 * This registration serves `--help` and global options written before `hook`.
 */
export function registerHook(program: Command): void {
  program
    .command('hook')
    .description(
      'agent hooks (Claude Code; Codex and Qwen Code for claude-context and claude-session-start; Gemini CLI; Copilot CLI; Qwen Code): claude-statusline, claude-guard, claude-session-start, claude-context, claude-event, gemini-guard, gemini-session-start, gemini-context, copilot-guard, copilot-session-start, copilot-context, copilot-event, copilot-statusline, qwen-guard, qwen-statusline; always exit 0',
    )
    .argument('<name>', 'the hook')
    .option(
      '--chain <command>',
      'claude-statusline, copilot-statusline, qwen-statusline: the previous status line command, run with the same stdin and shown first',
    )
    .action(async (name: string, options: { chain?: string }) => {
      process.exitCode = await runHook({ name, stateDir: program.opts<GlobalOptions>().stateDir, chain: options.chain });
    });
}
