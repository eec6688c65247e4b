import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../../support/git.js';

const COLUMNS = 120;
const LINES = 40;

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

export interface PtySession {
  /** What the program drew so far, escape sequences removed. */
  screen(): string;
  stop(): Promise<void>;
}

/**
 * Runs an interactive program under a pseudo-terminal with util-linux `script`, because some agent
 * features exist only in their TUI (Claude Code's status line). The program runs in its own process
 * group, so stopping it stops everything it started.
 */
export function startPty(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): PtySession {
  const log = join(tempDir('pty'), 'typescript');
  // `script` copies the terminal size of its own stdin, a pipe here: 0×0. Copilot CLI draws nothing
  // in a terminal that small (COLUMNS and LINES do not count for it), so the pty is given the size they say.
  const sized = `stty cols ${COLUMNS} rows ${LINES} 2>/dev/null; exec ${[command, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', sized, log], {
    cwd: options.cwd,
    env: { ...options.env, COLUMNS: String(COLUMNS), LINES: String(LINES) },
    // stdin stays open (a pipe nobody writes to): `script` ends the session when its input closes.
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    screen: () => {
      try {
        // eslint-disable-next-line no-control-regex
        return readFileSync(log, 'utf8').replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]/g, '');
      } catch {
        return '';
      }
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        await exited;
      }
      rmSync(dirname(log), { recursive: true, force: true });
    },
  };
}
