import type { AgentEvent, SkippedLine, UnknownMetric } from '../../protocol/ingest-report.js';
import type { ProviderWarning, Reading } from '../../schemas/telemetry.schema.js';

// The parts of an adapter's result that reach the ingest answer are protocol types (protocol/ingest-report.ts).
export type { AgentEvent, SkippedLine, UnknownMetric };

/** Everything an adapter may know about the outside world, injected so parsing stays pure. */
export interface ParseContext {
  /** The injected clock's now: the observation time of payloads that carry none of their own. */
  readonly observedAt: Date;
}

/** Where a payload belongs, so the daemon can route it to a workspace. */
export interface PayloadRoute {
  cwd: string | null;
  session_id: string | null;
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
