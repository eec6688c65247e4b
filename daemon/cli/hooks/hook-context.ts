/** What every hook runs with; output goes through here so tests can read it. */
export interface HookContext {
  readonly stateDir: string;
  /** The user's previous status line command, for claude-statusline. */
  readonly chain: string | null;
  out(text: string): void;
  err(text: string): void;
}

/** Claude Code writes the payload and closes stdin at once; this only bounds a caller that never does. */
export const STDIN_TIMEOUT_MS = 1000;
