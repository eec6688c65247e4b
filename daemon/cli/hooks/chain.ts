import { spawn } from 'node:child_process';

/** Output past this is not a status line. */
const OUTPUT_LIMIT = 64 * 1024;

/**
 * Runs the user's previous status line command with the same stdin, as Claude Code would have, and
 * gives its first line (null when it printed none in time). It runs beside the daemon call, so it
 * adds no time of ours; a command slower than `timeoutMs` is stopped and our line shows alone.
 */
export function runChained(command: string, stdin: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    const finish = () => {
      clearTimeout(timer);
      const first = output.split('\n')[0] ?? '';
      resolve(first === '' ? null : first);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      // A grandchild may still hold the pipes open: let go of them, or the hook could not exit.
      child.stdout.destroy();
      child.stdin.destroy();
      finish();
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (output.length < OUTPUT_LIMIT) output += chunk;
    });
    child.once('error', finish);
    child.once('close', finish);
    // A command that never reads stdin closes the pipe early: EPIPE here is expected, not a failure.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') process.stderr.write(`handoff: chained status line: ${error.message}\n`);
    });
    child.stdin.end(stdin);
  });
}
