import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { HandoffError } from '../../../protocol/errors.js';

/** A fresh real directory under the OS temp dir, removed when the calling test finishes. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'handoff-store-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The pid of a process that has exited and been reaped, so signal 0 answers ESRCH. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = requirePid(child);
  await once(child, 'exit');
  return pid;
}

export function requirePid(child: ChildProcess): number {
  if (child.pid === undefined) throw new Error('child process did not start');
  return child.pid;
}

/** Awaits a rejection and returns it as a HandoffError, failing the test for anything else. */
export async function handoffErrorOf(promise: Promise<unknown>): Promise<HandoffError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HandoffError) return error;
    throw new Error(`expected a HandoffError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a HandoffError, but the promise resolved');
}

export function modeOf(mode: number): number {
  return mode & 0o7777;
}
