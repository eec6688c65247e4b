import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI } from '../support/daemon.js';

export interface Piped {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs the built CLI with `input` on stdin, as an agent runs a hook or a user pipes a payload. */
export function piped(args: readonly string[], input: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Piped> {
  const start = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: options.cwd, env: { ...process.env, ...options.env }, encoding: 'utf8', timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr, ms: Date.now() - start });
      },
    );
    child.stdin?.end(input);
  });
}

const FIXTURES = new URL('../fixtures/reference-telemetry/', import.meta.url);

export function fixtureText(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The subscriber status line fixture, moved to `repo` and to now: its reset epochs lie in the past,
 * and a live daemon judges readings by its own clock.
 */
export function statuslinePayload(repo: string, fiveHour: number | null, extra: { session?: string; context?: number | null; now?: number } = {}): string {
  const now = extra.now ?? nowSeconds();
  const payload = JSON.parse(fixtureText('claude-statusline/subscriber-v2.1.2xx.json')) as {
    cwd: string;
    session_id: string;
    workspace: Record<string, unknown>;
    context_window: { used_percentage: number | null };
    rate_limits: { five_hour: { used_percentage: number | null; resets_at: number }; seven_day: { used_percentage: number; resets_at: number } };
  };
  payload.cwd = repo;
  payload.workspace = { ...payload.workspace, current_dir: repo, project_dir: repo };
  if (extra.session !== undefined) payload.session_id = extra.session;
  if (extra.context !== undefined) payload.context_window.used_percentage = extra.context;
  payload.rate_limits.five_hour = { used_percentage: fiveHour, resets_at: now + 3600 };
  payload.rate_limits.seven_day = { used_percentage: 41.2, resets_at: now + 6 * 86_400 };
  return JSON.stringify(payload);
}

/** One Codex `token_count` line written now, with the 5 h and weekly windows. */
export function codexTokenCount(fiveHour: number, weekly: number, at: Date = new Date(), resetShift = 0): string {
  const resets = nowSeconds() + resetShift;
  return JSON.stringify({
    timestamp: at.toISOString(),
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: null,
      rate_limits: {
        limit_id: 'codex',
        primary: { used_percent: fiveHour, window_minutes: 300, resets_at: resets + 3600 },
        secondary: { used_percent: weekly, window_minutes: 10080, resets_at: resets + 5 * 86_400 },
        plan_type: 'plus',
      },
    },
  });
}

export function codexSessionMeta(cwd: string, id: string): string {
  return JSON.stringify({
    timestamp: new Date().toISOString(),
    type: 'session_meta',
    payload: { id, timestamp: new Date().toISOString(), cwd, originator: 'codex_cli_rs', cli_version: '0.159.0' },
  });
}

/** A per-model family's token_count line, as current Codex writes next to the account's (`limit_id` "codex"). */
export function codexModelTokenCount(weekly: number, limit = { id: 'codex_bengalfox', name: 'GPT-5.3-Codex-Spark' }, at: Date = new Date()): string {
  const resets = nowSeconds();
  return JSON.stringify({
    timestamp: at.toISOString(),
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: null,
      rate_limits: {
        limit_id: limit.id,
        limit_name: limit.name,
        primary: { used_percent: weekly, window_minutes: 10080, resets_at: resets + 5 * 86_400 },
        secondary: null,
        credits: null,
        plan_type: 'pro',
      },
    },
  });
}
