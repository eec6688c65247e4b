import type { WayOut } from '../schemas/way-out.schema.js';
import type { Metric, ProviderWarning, Reading, Source } from '../schemas/telemetry.schema.js';
import type { Code } from './codes.js';
import type { WorkspaceState } from './workspace-machine.js';

/**
 * What `POST /v1/ingest/:adapter` answers, and the parts an adapter reports: the daemon builds it,
 * the CLI renders it, so both import it from here.
 */

/** An agent lifecycle event (compaction, session start/end, stop). Carries no numbers. */
export interface AgentEvent {
  source: Source;
  /** The agent's own event name, e.g. 'SessionStart', 'PreCompact', 'StopFailure'. */
  name: string;
  detail: Record<string, string | null>;
  observed_at: string;
  raw_sha256: string;
  executor: string | null;
}

/** A metric the payload speaks about without giving a number: said plainly, never turned into 0. */
export interface UnknownMetric {
  metric: Metric;
  reason: string;
}

/** A line of a multi-line payload that could not be read: left out, named, and the rest still counts. */
export interface SkippedLine {
  /** 1-based, as an editor shows it. */
  line: number;
  reason: string;
}

export interface NotCredible {
  readonly reading: Reading;
  readonly reason: string;
  readonly message: string;
}

/** What one payload did to its workspace: the `data` of the `ingested` Envelope. */
export interface IngestReport {
  readonly workspace: string;
  readonly state: WorkspaceState;
  readonly cycle: string | null;
  readonly adapter: Source;
  /** How the payload was routed; a tailer keeps cwd and session for the next chunk of the file. */
  readonly route: { readonly by: 'repo' | 'payload'; readonly cwd: string | null; readonly session_id: string | null };
  readonly recorded: Reading[];
  readonly unchanged: Reading[];
  readonly not_credible: NotCredible[];
  readonly unknown: UnknownMetric[];
  readonly warnings: { readonly warning: ProviderWarning; readonly code: Code }[];
  readonly events: AgentEvent[];
  /** Lines of a multi-line payload that could not be read; every other line counted. */
  readonly skipped_lines: SkippedLine[];
  /** The workspace's way out after the payload (protocol/way-out.ts): the agent's status line says it. */
  readonly way_out?: WayOut;
}
