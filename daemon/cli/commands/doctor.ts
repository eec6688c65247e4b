import { homedir } from 'node:os';
import type { Command } from 'commander';
import { failure, formatAge, success, wayOutSentence, type Envelope } from '../../../protocol/index.js';
import { printableDeep } from '../../../protocol/printable.js';
import type { WayOut } from '../../../schemas/index.js';
import type { Source } from '../../../schemas/telemetry.schema.js';
import { action, type CommandContext } from '../context.js';
import { processView, relativeTime, type View } from '../render/index.js';
import { checkAgent, DOCTOR_AGENTS, type AgentCheck } from '../doctor-checks.js';

interface DoctorReport {
  readonly agents: readonly AgentCheck[];
  /** Whether a daemon answered: without one, no telemetry can have been seen. */
  readonly daemon: boolean;
  /** The rehearsal doctor ran now (null: none could run, `way_out_line` says why). */
  readonly way_out: WayOut | null;
  /** The way out in words (protocol/way-out.ts), or why it was not rehearsed. */
  readonly way_out_line: string;
}

/** A rehearsal can take a few git round trips, each bounded by git_timeout_seconds in the daemon. */
const REHEARSAL_WAIT_MS = 600_000;

/** The way out, rehearsed now by the daemon for this repository (`POST /v1/rehearse`). */
async function rehearse(call: (options: Parameters<CommandContext['call']>[0]) => Promise<Envelope>, repo: string, nowMs: number) {
  const answer = await call({ method: 'POST', path: '/v1/rehearse', body: { repo }, autoStart: false, timeoutMs: REHEARSAL_WAIT_MS });
  if (answer.error !== undefined) return { way_out: null, way_out_line: `way out: not rehearsed — ${answer.error.message}` };
  const data = answer.data as { way_out: WayOut; thresholds: { evacuate_percent: number } };
  const view = { nowMs, evacuatePercent: data.thresholds.evacuate_percent, age: formatAge };
  return { way_out: data.way_out, way_out_line: wayOutSentence(data.way_out, view) };
}

interface WorkspacesOutline {
  readonly workspaces?: readonly { readonly status?: { readonly readings?: readonly { readonly source?: unknown; readonly observed_at?: unknown }[] } }[];
}

/** The newest reading per source over every workspace the daemon holds, or null without a daemon. */
function lastSeen(envelope: Envelope): Map<Source, string> | null {
  if (envelope.error !== undefined) return null;
  const seen = new Map<Source, string>();
  for (const card of (envelope.data as WorkspacesOutline | null)?.workspaces ?? []) {
    for (const reading of card.status?.readings ?? []) {
      if (typeof reading.source !== 'string' || typeof reading.observed_at !== 'string') continue;
      const source = reading.source as Source;
      const before = seen.get(source);
      if (before === undefined || reading.observed_at > before) seen.set(source, reading.observed_at);
    }
  }
  return seen;
}

function agentLines(check: AgentCheck, view: View): string[] {
  const state = !check.installed ? 'not installed' : check.live ? 'live' : 'installed, NOT live';
  const lines = [`${check.agent}: ${state} (${check.config})`];
  for (const hook of check.hooks) {
    const trouble = [hook.problem, hook.trust === undefined || hook.trust === 'trusted' ? null : `Codex: ${hook.trust.replaceAll('_', ' ')}`].filter(Boolean);
    if (trouble.length > 0) lines.push(`  ✗ ${hook.command}: ${trouble.join('; ')}`);
  }
  for (const hook of check.missing) lines.push(`  ✗ no ${hook} hook: installed by an older version`);
  if (check.problem !== undefined) lines.push(`  ✗ ${check.problem}`);
  if (check.telemetry.sources.length > 0) {
    lines.push(
      `  telemetry (${check.telemetry.sources.join(', ')}): ${check.telemetry.last_seen === null ? 'never seen' : `last seen ${relativeTime(check.telemetry.last_seen, view.nowMs)}`}`,
    );
  }
  if (check.step !== null && check.installed) lines.push(`  to do once: ${check.step}`);
  return lines;
}

/** `handoff doctor`'s human text: one block per agent, what is wrong and the one step that fixes it. */
export function renderDoctor(report: DoctorReport, _code?: string, view: View = processView()): string {
  const lines = report.agents.flatMap((check) => agentLines(check, view));
  if (!report.daemon) lines.push('daemon: not running, so no telemetry can have been seen (`handoff daemon`)');
  lines.push(report.way_out_line);
  return lines.join('\n');
}

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'per agent (claude, codex, gemini, opencode, copilot, qwen, cline): whether its config has our hooks (Cline: our plugin), whether they are live (each command starts; Codex: a person trusted them; Cline: its logs do not say it ran without the plugin), the one step that makes them live, and when its telemetry was last seen; then the way out: the running daemon rehearses the evacuation of this repository now, from its own environment (in any state before EVACUATE; nothing is pushed but a probe ref under refs/handoff/rehearsal/, deleted again at once). Changes nothing of yours. Exit 0 when every installed agent is live, 10 (agents_not_live) otherwise',
    )
    .action(
      action(async (ctx) => {
        const workspaces = await ctx.call({ method: 'GET', path: '/v1/workspaces', autoStart: false });
        const seen = lastSeen(workspaces);
        const where = { env: process.env, home: homedir(), repo: ctx.repo, stateDir: ctx.stateDir, lastSeen: seen };
        const agents = await Promise.all(DOCTOR_AGENTS.map((agent) => checkAgent(agent, where)));
        const report: DoctorReport = { agents, daemon: seen !== null, ...(await rehearse(ctx.call, ctx.repo, Date.now())) };
        const dead = agents.filter((check) => check.installed && !check.live);
        if (dead.length === 0) return success('agents_live', report);
        // The human view of a failure is its message and hint only (output.ts): the report goes first, on stdout.
        if (!ctx.output.json) ctx.output.out(renderDoctor(printableDeep(report, { lines: true }) as DoctorReport));
        return failure(
          'agents_not_live',
          `installed but not live: ${dead.map((check) => check.agent).join(', ')}; the agent skips these hooks without a word`,
          dead.map((check) => `${check.agent}: ${check.step ?? 'see docs/agents/'}`).join('; '),
          report,
        );
      }, renderDoctor),
    );
}
