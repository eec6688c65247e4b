import { lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SPOOL_DIR } from '../../../protocol/event-spool.js';
import type { HookContext } from './hook-context.js';
import { STDIN_TIMEOUT_MS } from './hook-context.js';
import { readStdin } from './stdin.js';

/**
 * Puts the payload where the daemon reads it: a dot-file first, then a rename to its final name, so
 * the daemon never sees half a payload. Returns the final path. Throws when the state dir is not a
 * private directory of this user (a daemon never ran there, or it is not ours to write into).
 */
export function spoolPayload(stateDir: string, payload: string, nowMs: number = Date.now()): string {
  const facts = lstatSync(stateDir);
  if (!facts.isDirectory() || (facts.mode & 0o077) !== 0 || facts.uid !== process.getuid?.())
    throw new Error(`${stateDir} is not a private state dir of this user`);
  const dir = join(stateDir, SPOOL_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // pid and a nanosecond clock rather than node:crypto, whose load costs this race a few ms; `wx` and
  // the pid keep two hooks from ever sharing a name.
  const unique = `${process.pid.toString(16).padStart(6, '0').slice(-6)}${(process.hrtime.bigint() & 0xffffffn).toString(16).padStart(6, '0')}`;
  const name = `${String(nowMs).padStart(13, '0')}-${unique}.json`;
  const temp = join(dir, `.${name}`);
  writeFileSync(temp, payload, { mode: 0o600, flag: 'wx' });
  renameSync(temp, join(dir, name));
  return join(dir, name);
}

/**
 * `handoff hook claude-event`: hands any Claude Code hook payload (StopFailure, PreCompact…) to the
 * daemon's claude-hook adapter; a stop on a rate limit is a provider warning and moves the repository
 * to EVACUATE. Headless Claude Code (`claude -p`) kills this hook about 90 ms after starting it, before
 * a round trip to the daemon is sure to end, so the payload goes to a spool file in the state dir —
 * safe once renamed, a few ms after stdin — and the daemon takes it from there (at once when it runs,
 * at its next start otherwise). Prints nothing: the agent needs no reply.
 */
export async function eventHook(ctx: HookContext): Promise<void> {
  const payload = await readStdin(STDIN_TIMEOUT_MS);
  if (payload.trim() === '') return;
  try {
    spoolPayload(ctx.stateDir, payload);
  } catch (error) {
    ctx.err(`handoff: the event was not recorded (${(error as Error).message})`);
  }
}
