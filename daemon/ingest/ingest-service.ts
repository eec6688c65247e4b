import { ADAPTERS } from '../../adapters/telemetry/index.js';
import { HandoffError, readingKey, stateOf, UNKNOWN_WAY_OUT, type IngestReport } from '../../protocol/index.js';
import type { Reading, Source } from '../../schemas/telemetry.schema.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { WorkspaceRegistry } from '../workspaces/registry.js';
import { checkReading } from './reading-check.js';
import type { RootResolver } from './root-cache.js';

export interface IngestRequest {
  readonly adapter: Source;
  readonly payload: string;
  /** A directory inside the repository; overrides the payload's cwd. */
  readonly repo?: string | undefined;
  /** The session for records whose payload names none. */
  readonly executor?: string | undefined;
}

export interface IngestDeps {
  readonly registry: WorkspaceRegistry;
  readonly clock: Clock;
  readonly resolveRoot: RootResolver;
  readonly log: Logger;
}

const withExecutor = <T extends { executor: string | null }>(item: T, executor: string | null): T =>
  item.executor === null && executor !== null ? { ...item, executor } : item;

/**
 * Raw payload → adapter → workspace events. The adapter parses with the daemon's clock; readings go
 * to the machine one by one, after the checks that need the workspace's previous reading.
 */
export function createIngestService(deps: IngestDeps) {
  const { registry, clock, log } = deps;

  async function recordReading(root: string, reading: Reading, report: IngestReport): Promise<void> {
    const { context } = (await registry.open(root)).snapshot();
    const check = checkReading(context.readings[readingKey(reading)], reading, context.policy);
    if (check.kind === 'unchanged') {
      report.unchanged.push(reading);
      return;
    }
    if (check.kind === 'not_credible') {
      report.not_credible.push({ reading, reason: check.reason, message: check.message });
      return;
    }
    const { outcome } = await registry.dispatch(root, { type: 'READING', reading });
    if (outcome.code === 'reading_recorded') {
      report.recorded.push(reading);
    } else {
      const reason = typeof outcome.data?.['reason'] === 'string' ? outcome.data['reason'] : outcome.code;
      report.not_credible.push({ reading, reason, message: outcome.message ?? outcome.code });
    }
  }

  return {
    async ingest(request: IngestRequest): Promise<IngestReport> {
      const parsed = ADAPTERS[request.adapter](request.payload, { observedAt: new Date(clock.now()) });
      const dir = request.repo ?? parsed.route.cwd;
      if (dir === null && parsed.readings.length === 0 && parsed.warnings.length === 0 && parsed.events.length === 0) {
        // Nothing to route and nothing to record: say what the payload held instead of asking where it goes.
        const reasons = [...new Set(parsed.unknown.map((u) => u.reason))];
        const [first] = parsed.skipped;
        if (first !== undefined) reasons.push(`${parsed.skipped.length} line(s) could not be read (line ${first.line}: ${first.reason})`);
        throw new HandoffError(
          'usage_error',
          `the ${request.adapter} payload holds nothing to record${reasons.length === 0 ? '' : `: ${reasons.join('; ')}`}`,
          'nothing to do: no reading, warning or event in it',
        );
      }
      if (dir === null) {
        throw new HandoffError(
          'usage_error',
          `the ${request.adapter} payload names no working directory (cwd), so it belongs to no repository`,
          'say which repository it is for: `handoff ingest ADAPTER --repo DIR` (HTTP: "repo" in the body)',
        );
      }
      const root = await deps.resolveRoot(dir);
      const executor = parsed.route.session_id ?? request.executor ?? null;
      const report: IngestReport = {
        workspace: root,
        state: 'NORMAL',
        cycle: null,
        adapter: request.adapter,
        route: { by: request.repo === undefined ? 'payload' : 'repo', cwd: parsed.route.cwd, session_id: executor },
        recorded: [],
        unchanged: [],
        not_credible: [],
        unknown: parsed.unknown,
        warnings: [],
        events: parsed.events.map((event) => withExecutor(event, executor)),
        skipped_lines: parsed.skipped,
      };
      // In payload order: a reading is judged against what the previous one left behind.
      for (const reading of parsed.readings) await recordReading(root, withExecutor(reading, executor), report);
      for (const item of parsed.warnings) {
        const warning = withExecutor(item, executor);
        const { outcome } = await registry.dispatch(root, { type: 'WARNING', warning });
        report.warnings.push({ warning, code: outcome.code });
      }
      // Lifecycle events move nothing; the log keeps them so a cycle can be explained afterwards.
      for (const event of report.events)
        log.info({ workspace: root, source: event.source, event: event.name, detail: event.detail, executor: event.executor }, 'agent event');
      const snapshot = (await registry.open(root)).snapshot();
      return { ...report, state: stateOf(snapshot), cycle: snapshot.context.cycle?.id ?? null, way_out: snapshot.context.way_out ?? UNKNOWN_WAY_OUT };
    },
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
