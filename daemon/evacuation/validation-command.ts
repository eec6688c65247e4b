import { spawn } from 'node:child_process';
import { redactValues } from '../../protocol/index.js';
import type { Validation } from '../../schemas/index.js';

const TAIL_BYTES = 4096;
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE/i;

/** Values of the environment that look like secrets: never copied into an output tail. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter(([name, value]) => value !== undefined && SECRET_NAME.test(name))
    .map(([, value]) => value as string);
}

/**
 * The validation runs under this supervisor, the leader of its own process group: a group outlives
 * a daemon killed with -9, so the supervisor holds a pipe from the daemon and, when the daemon's end
 * closes (only the kernel closes it on a -9), kills its whole group — the command and all it started.
 * It passes on the command's exit status (a signal as the same signal).
 */
const SUPERVISOR = `
const { spawn } = require('node:child_process');
const child = spawn('sh', ['-c', process.argv[1]], { stdio: ['ignore', 'inherit', 'inherit'] });
process.stdin.on('close', () => process.kill(-process.pid, 'SIGKILL')).resume();
child.on('error', (error) => { process.stderr.write('could not start: ' + error.message); process.exit(127); });
child.on('exit', (code, signal) => (signal === null ? process.exit(code ?? 1) : process.kill(process.pid, signal)));
`;

/**
 * Runs the configured minimal validation in the repository root, stdin closed, in its own process
 * group (killed whole on timeout, and when the daemon dies: SUPERVISOR), and records honestly what happened.
 */
export function runValidation(root: string, command: string | null, timeoutMs: number, now: () => number): Promise<Validation> {
  if (command === null)
    return Promise.resolve({
      command: null,
      status: 'not_run',
      exit_code: null,
      duration_ms: null,
      output_tail: 'no validation command is configured (config: validation.command)',
    });
  return new Promise((resolve) => {
    const started = now();
    const child = spawn(process.execPath, ['-e', SUPERVISOR, command], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    // The supervisor's lifeline: never written, closed by the kernel when the daemon dies.
    child.stdin?.on('error', () => undefined);
    let tail = Buffer.alloc(0);
    const keep = (chunk: Buffer) => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > TAIL_BYTES * 2) tail = tail.subarray(tail.length - TAIL_BYTES);
    };
    // Out of descriptors (EMFILE), Node reports the failure as an 'error' event on the next tick and
    // sets up no pipes: the listener comes first, and missing pipes are not touched.
    child.on('error', (error) => {
      keep(Buffer.from(`could not start: ${error.message}`));
      finish(127);
    });
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    let finished = false;
    const finish = (code: number | null) => {
      // An 'error' may be followed by 'close': the first one decides.
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const text = redactValues(tail.subarray(Math.max(0, tail.length - TAIL_BYTES)).toString('utf8'), secretValues());
      resolve({
        // The command line itself may carry a credentialed URL; it is recorded without it.
        command: redactValues(command, secretValues()),
        status: timedOut ? 'timed_out' : code === 0 ? 'passed' : 'failed',
        exit_code: timedOut ? null : code,
        duration_ms: Math.max(0, Math.round(now() - started)),
        output_tail: text === '' ? null : text,
      });
    };
    child.on('close', finish);
  });
}
