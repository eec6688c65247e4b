import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { parseClaudeHook } from '../../../adapters/telemetry/index.js';
import { CTX, expectInvalidBody, expectSchemaValid, fixture, FIXTURE_ISO } from './fixture-helpers.js';

const SESSION = '3f0c9a52-7d1e-4b6a-9c2e-5a1b8f0d4e21';
const ROUTE = { cwd: '/home/dev/acme-api', session_id: SESSION };

const EVENT_FIXTURES: readonly { file: string; name: string; detail: Record<string, string | null> }[] = [
  { file: 'claude-hooks/Notification.idle_prompt.json', name: 'Notification', detail: { notification_type: 'idle_prompt' } },
  { file: 'claude-hooks/PostCompact.manual.json', name: 'PostCompact', detail: { trigger: 'manual' } },
  { file: 'claude-hooks/PreCompact.auto.json', name: 'PreCompact', detail: { trigger: 'auto' } },
  { file: 'claude-hooks/SessionEnd.json', name: 'SessionEnd', detail: { reason: 'prompt_input_exit' } },
  { file: 'claude-hooks/SessionStart.compact.json', name: 'SessionStart', detail: { source: 'compact' } },
  { file: 'claude-hooks/SessionStart.startup.json', name: 'SessionStart', detail: { source: 'startup' } },
  { file: 'claude-hooks/Stop.json', name: 'Stop', detail: {} },
  { file: 'claude-hooks/UserPromptSubmit.json', name: 'UserPromptSubmit', detail: {} },
];

describe('claude-hook', () => {
  it.each(EVENT_FIXTURES)('$file → one $name event, no reading, no warning', ({ file, name, detail }) => {
    const raw = fixture(file);
    const result = parseClaudeHook(raw, CTX);
    expect(result.events).toEqual([
      {
        source: 'claude-hook',
        name,
        detail,
        observed_at: FIXTURE_ISO,
        raw_sha256: createHash('sha256').update(raw).digest('hex'),
        executor: SESSION,
      },
    ]);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.route).toEqual(ROUTE);
  });

  it('StopFailure.rate_limit.json → a StopFailure event and a recovering rate_limit warning', () => {
    const raw = fixture('claude-hooks/StopFailure.rate_limit.json');
    const result = parseClaudeHook(raw, CTX);
    const sha = createHash('sha256').update(raw).digest('hex');
    expect(result.events).toEqual([
      {
        source: 'claude-hook',
        name: 'StopFailure',
        detail: { error: 'rate_limit', error_details: '429 Too Many Requests' },
        observed_at: FIXTURE_ISO,
        raw_sha256: sha,
        executor: SESSION,
      },
    ]);
    expect(result.warnings).toEqual([
      {
        source: 'claude-hook',
        kind: 'rate_limit',
        text: 'Claude Code stopped on a rate limit: 429 Too Many Requests',
        recovers: true,
        retry_after_seconds: null,
        observed_at: FIXTURE_ISO,
        raw_sha256: sha,
        executor: SESSION,
      },
    ]);
    expect(result.readings).toEqual([]);
    expectSchemaValid(result);
  });

  it('a StopFailure for another error is an event without warning', () => {
    const raw = JSON.stringify({ session_id: 's', cwd: '/r', hook_event_name: 'StopFailure', error: 'server_error' });
    const result = parseClaudeHook(raw, CTX);
    expect(result.events.map((e) => e.name)).toEqual(['StopFailure']);
    expect(result.warnings).toEqual([]);
  });

  it('sdk.rate_limit_event.json → an event and a warning, but no reading from the utilization fraction', () => {
    const result = parseClaudeHook(fixture('claude-hooks/sdk.rate_limit_event.json'), CTX);
    expect(result.readings).toEqual([]);
    expect(result.unknown).toEqual([]);
    expect(result.events).toHaveLength(1);
    expect(result.events[0]?.name).toBe('rate_limit_event');
    expect(result.events[0]?.detail).toEqual({
      status: 'allowed_warning',
      rateLimitType: 'five_hour',
      resetsAt: '1787234400',
      utilization: '0.91',
    });
    expect(result.warnings.map((w) => [w.kind, w.recovers, w.executor])).toEqual([['rate_limit', true, SESSION]]);
    expect(result.warnings[0]?.text).toBe('Claude rate limit status allowed_warning (five_hour window, utilization 0.91, resets at 2026-08-20T14:00:00.000Z)');
    expect(result.route).toEqual({ cwd: null, session_id: SESSION });
    expectSchemaValid(result);
  });

  it('an SDK rate_limit_event with status allowed gives no warning', () => {
    const raw = JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed', utilization: null }, session_id: 's' });
    expect(parseClaudeHook(raw, CTX).warnings).toEqual([]);
  });

  it('settings.hooks.example.json is configuration, not a hook payload: invalid_body', () => {
    const error = expectInvalidBody(() => parseClaudeHook(fixture('claude-hooks/settings.hooks.example.json'), CTX));
    expect(error.message).toBe('claude-hook: hook_event_name must be a non-empty string, got nothing');
    expect(error.hint).toMatch(/hook_event_name/);
  });

  it('passes an unlisted event name through with an empty detail', () => {
    const raw = JSON.stringify({ session_id: 's', cwd: '/r', hook_event_name: 'PreToolUse', tool_name: 'Bash' });
    expect(parseClaudeHook(raw, CTX).events.map((e) => [e.name, e.detail])).toEqual([['PreToolUse', {}]]);
  });

  it('does not read prototype keys for an event named constructor', () => {
    const raw = JSON.stringify({ session_id: 's', hook_event_name: 'constructor' });
    expect(parseClaudeHook(raw, CTX).events[0]?.detail).toEqual({});
  });

  it('refuses non-JSON and wrongly typed fields', () => {
    expect(expectInvalidBody(() => parseClaudeHook('{', CTX)).message).toMatch(/not valid JSON/);
    expect(expectInvalidBody(() => parseClaudeHook(JSON.stringify({ hook_event_name: 'SessionStart', source: 3 }), CTX)).message).toMatch(
      /source must be a string or null, got a number/,
    );
  });
});
