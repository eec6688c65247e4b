import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseJsonFile } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, expectSchemaValid, FIXTURE_ISO } from './fixture-helpers.js';

describe('json-file', () => {
  it("reads a script's readings as given, routed by cwd", () => {
    const raw = JSON.stringify({
      readings: [
        { metric: 'weekly', used_percent: 104.5, resets_at: 1787648400 },
        { metric: 'context', used_percent: 0 },
        { metric: 'five_hour', used_percent: null },
      ],
      cwd: '/home/dev/acme-api',
    });
    const result = parseJsonFile(raw, CTX);
    const common = { source: 'json-file', observed_at: FIXTURE_ISO, raw_sha256: createHash('sha256').update(raw).digest('hex'), executor: null };
    expect(result.readings).toEqual([
      { ...common, metric: 'context', used_percent: 0, resets_at: null },
      { ...common, metric: 'weekly', used_percent: 104.5, resets_at: 1787648400 },
    ]);
    expect(result.unknown).toEqual([{ metric: 'five_hour', reason: 'readings[2].used_percent is null' }]);
    expect(result.route).toEqual({ cwd: '/home/dev/acme-api', session_id: null });
    expectSchemaValid(result);
  });

  it.each([
    ['not JSON', 'nope', /the payload is not valid JSON/],
    ['readings missing', '{}', /readings must be an array, got nothing/],
    ['unknown top key', '{"readings": [], "repo": "/x"}', /the payload has unexpected keys: repo/],
    ['misspelt reading key', '{"readings": [{"metric": "context", "used_pct": 5}]}', /readings\[0\] has unexpected keys: used_pct/],
    ['unknown metric', '{"readings": [{"metric": "daily", "used_percent": 5}]}', /readings\[0\]\.metric must be one of/],
    ['used_percent missing', '{"readings": [{"metric": "context"}]}', /readings\[0\]\.used_percent is required/],
    ['used_percent a string', '{"readings": [{"metric": "context", "used_percent": "5"}]}', /used_percent must be a number or null, got a string/],
    ['negative percent', '{"readings": [{"metric": "context", "used_percent": -1}]}', /used_percent must lie between 0 and/],
    ['resets_at in ms', '{"readings": [{"metric": "context", "used_percent": 1, "resets_at": 1787648400000}]}', /resets_at must lie between/],
    ['duplicate metric', '{"readings": [{"metric": "context", "used_percent": 1}, {"metric": "context", "used_percent": 2}]}', /appears twice/],
    ['cwd not a string', '{"readings": [], "cwd": 3}', /cwd must be a string or null, got a number/],
  ])('refuses %s', (_name, raw, message) => {
    const error = expectInvalidBody(() => parseJsonFile(raw, CTX));
    expect(error.message).toMatch(message);
    expect(error.hint).toMatch(/"readings"/);
  });
});
