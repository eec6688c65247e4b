import type { Metric, ProviderWarning, Reading, Source } from '../../schemas/telemetry.schema.js';

/** Everything an adapter may know about the outside world, injected so parsing stays pure. */
export interface ParseContext {
  /** The injected clock's now: the observation time of payloads that carry none of their own. */
  readonly observedAt: Date;
}

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

/** Where a payload belongs, so the daemon can route it to a workspace. */
export interface PayloadRoute {
  cwd: string | null;
  session_id: string | null;
}

/** A line of a multi-line payload that could not be read: left out, named, and the rest still counts. */
export interface SkippedLine {
  /** 1-based, as an editor shows it. */
  line: number;
  reason: string;
}

export interface AdapterResult {
  /** Only numbers the agent or provider reported; at most one per metric. */
  readings: Reading[];
  unknown: UnknownMetric[];
  warnings: ProviderWarning[];
  events: AgentEvent[];
  route: PayloadRoute;
  skipped: SkippedLine[];
}

export type Adapter = (raw: string, ctx: ParseContext) => AdapterResult;
