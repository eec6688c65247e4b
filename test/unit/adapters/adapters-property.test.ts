// Generated payloads near every adapter's real shapes (wrong types, nulls, huge numbers, stray text): an
// adapter either reads them or refuses with invalid_body; any other exception would be a 5xx.
import fc from 'fast-check';
import { it } from 'vitest';
import { ADAPTERS } from '../../../adapters/telemetry/index.js';
import { isHandoffError } from '../../../protocol/errors.js';
const ctx = { observedAt: new Date('2026-08-20T10:00:00Z') };
const jsonish = fc.oneof(
  fc.string(),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.array(fc.jsonValue().map((v) => JSON.stringify(v))).map((a) => a.join('\n')),
  fc
    .record({
      type: fc.constantFrom('event_msg', 'session_meta', 'turn_context'),
      payload: fc.oneof(
        fc.jsonValue(),
        fc.record({
          type: fc.constant('token_count'),
          rate_limits: fc.oneof(
            fc.jsonValue(),
            fc.record({
              limit_id: fc.jsonValue(),
              limit_name: fc.jsonValue(),
              primary: fc.jsonValue(),
              secondary: fc.record({ used_percent: fc.jsonValue(), window_minutes: fc.constantFrom(300, '300', 10080), resets_at: fc.jsonValue() }),
            }),
          ),
          info: fc.jsonValue(),
        }),
      ),
      timestamp: fc.jsonValue(),
    })
    .map((v) => JSON.stringify(v) + '\n'),
  fc
    .record({
      context_window: fc.jsonValue(),
      rate_limits: fc.oneof(
        fc.jsonValue(),
        fc.record({ five_hour: fc.jsonValue(), seven_day: fc.record({ used_percentage: fc.jsonValue(), resets_at: fc.jsonValue() }) }),
      ),
      cwd: fc.jsonValue(),
      workspace: fc.jsonValue(),
      session_id: fc.jsonValue(),
    })
    .map((v) => JSON.stringify(v)),
  fc
    .record({
      attributes: fc.record({
        'event.name': fc.constantFrom('gemini_cli.api_error', 'x'),
        status_code: fc.jsonValue(),
        error: fc.jsonValue(),
        'event.timestamp': fc.jsonValue(),
        'session.id': fc.jsonValue(),
      }),
      hrTime: fc.jsonValue(),
    })
    .map((v) => JSON.stringify(v, null, 2)),
  fc.record({ resourceLogs: fc.jsonValue() }).map((v) => JSON.stringify(v)),
  fc
    .record({
      messages: fc.array(fc.record({ type: fc.constantFrom('error', 'user'), content: fc.jsonValue(), timestamp: fc.jsonValue() })),
      sessionId: fc.jsonValue(),
    })
    .map((v) => JSON.stringify(v)),
  fc.tuple(fc.string(), fc.json()).map(([h, b]) => `HTTP/2 429\r\n${h}\r\n\r\n${b}`),
);
it('an adapter refuses any input with a HandoffError or reads it; it never throws anything else (a 5xx)', () => {
  fc.assert(
    fc.property(fc.constantFrom(...Object.keys(ADAPTERS)), jsonish, (name, raw) => {
      try {
        ADAPTERS[name as keyof typeof ADAPTERS](raw, ctx);
      } catch (e) {
        if (!isHandoffError(e)) throw e;
      }
    }),
    { numRuns: 3000, seed: 15 },
  );
});
