/** The hook events that show a session mid-turn: it submitted a prompt, or one of its tool calls ended. */
const AT_WORK: ReadonlySet<string> = new Set(['UserPromptSubmit', 'PostToolUse']);

/**
 * When each repository last saw an agent session at work through its hooks, for the drain wait
 * (protocol/drain-plan.ts agentSeenWorking). In memory, one time per repository: it only has to
 * outlive the few minutes of a drain timeout, and after a restart the readings still speak.
 */
export class SessionActivity {
  private readonly last = new Map<string, number>();

  hookEvent(root: string, event: string, atMs: number): void {
    if (AT_WORK.has(event)) this.last.set(root, Math.max(atMs, this.last.get(root) ?? atMs));
  }

  lastHookMs(root: string): number | null {
    return this.last.get(root) ?? null;
  }
}
