import type { ServerResponse } from 'node:http';
import { json, sse, startMock, type MockProvider, type RecordedRequest } from './mock-server.js';

/** What the mock answers to one Messages API call. */
export type AnthropicTurn = { readonly text: string } | { readonly tool: string; readonly input: Record<string, unknown> };

export interface AnthropicMockOptions {
  /** Fractions 0–1, as the unified headers carry them (`-utilization`), with their resets in epoch seconds. */
  readonly fiveHour: { readonly utilization: number; readonly reset: number };
  readonly sevenDay: { readonly utilization: number; readonly reset: number };
  /** Input tokens reported per call: Claude Code divides them by the model's window for `context_window.used_percentage`. */
  readonly inputTokens: number;
  /** Decides each answer; the default answers text. */
  readonly turn?: (request: RecordedRequest) => AnthropicTurn;
  /**
   * A gateway's spend cap, read at each call: the `-overage-*` headers Claude Code turns into the status
   * line's `rate_limits.spend_limit`. Absent: no spend headers, as for a user with no cap.
   */
  readonly spend?: () => { readonly utilization: number; readonly reset: number } | null;
  /**
   * Read at each call: `limit_reached` refuses it as a subscriber's reached five-hour limit, `throttled`
   * with a bare 429 (a proxy's or an API key's rate limit: no unified headers).
   */
  readonly refusal?: () => 'limit_reached' | 'throttled' | null;
}

/**
 * The answer of the gateway protocol Claude Code 2.1.328 documents in its own binary ("Usage-limit
 * headers"): `representative-claim: overage`, a fraction of the cap used, and a surpassed threshold
 * (0.75 or 0.95) once past it. Success responses only.
 */
function spendHeaders(spend: { utilization: number; reset: number }): Record<string, string> {
  const threshold = [0.95, 0.75].find((line) => spend.utilization > line);
  return {
    'anthropic-ratelimit-unified-status': threshold === undefined ? 'allowed' : 'allowed_warning',
    'anthropic-ratelimit-unified-representative-claim': 'overage',
    'anthropic-ratelimit-unified-overage-status': threshold === undefined ? 'allowed' : 'allowed_warning',
    'anthropic-ratelimit-unified-overage-utilization': spend.utilization.toFixed(2),
    'anthropic-ratelimit-unified-reset': String(spend.reset),
    'anthropic-ratelimit-unified-overage-reset': String(spend.reset),
    ...(threshold === undefined ? {} : { 'anthropic-ratelimit-unified-overage-surpassed-threshold': String(threshold) }),
  };
}

/**
 * A subscriber's five-hour limit reached: the 429 api.anthropic.com answers (headers as reported from a
 * live rejection in public issues, names as Claude Code reads them): unified and 5h status `rejected`,
 * the claim, utilization past 1, the reset, no extra usage (`overage-disabled-reason`), `retry-after`
 * until the reset, and the `rate_limit_error` body. No `x-should-retry`: Claude Code does not retry a
 * rejected unified limit either way (it does retry a bare 429, up to 10 times).
 */
const RATE_LIMIT_ERROR = {
  type: 'error',
  error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." },
};

function limitReached(res: ServerResponse, fiveHourReset: number): void {
  json(res, 429, RATE_LIMIT_ERROR, {
    'request-id': 'req_mock_limited',
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': 'rejected',
    'anthropic-ratelimit-unified-5h-utilization': '1.02',
    'anthropic-ratelimit-unified-5h-reset': String(fiveHourReset),
    'anthropic-ratelimit-unified-reset': String(fiveHourReset),
    'anthropic-ratelimit-unified-overage-status': 'rejected',
    'anthropic-ratelimit-unified-overage-disabled-reason': 'org_level_disabled',
    'retry-after': String(Math.max(1, fiveHourReset - Math.floor(Date.now() / 1000))),
  });
}

interface MessagesBody {
  readonly stream?: boolean;
  readonly model?: string;
  readonly messages?: readonly { role: string; content: unknown }[];
}

/** True when the last user message carries a tool result: the agent ran the tool the mock asked for. */
export function answersToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as MessagesBody | null)?.messages ?? [];
  const last = messages[messages.length - 1];
  return Array.isArray(last?.content) && last.content.some((block: { type?: string }) => block.type === 'tool_result');
}

/** The text of every tool result the agent sent back, in order: what the model learnt from its tool calls. */
export function toolResults(requests: readonly RecordedRequest[]): string[] {
  return requests.flatMap((request) =>
    ((request.body as MessagesBody | null)?.messages ?? []).flatMap((message) =>
      Array.isArray(message.content)
        ? message.content
            .filter((block: { type?: string }) => block.type === 'tool_result')
            .map((block: { content?: unknown }) => (typeof block.content === 'string' ? block.content : JSON.stringify(block.content)))
        : [],
    ),
  );
}

/**
 * The Anthropic Messages API (SSE when `stream` is set), with the `anthropic-ratelimit-unified-*`
 * headers a subscription response carries (docs/agents/provider-headers.md).
 */
export function startAnthropicMock(options: AnthropicMockOptions): Promise<MockProvider> {
  const windows = {
    'request-id': 'req_mock',
    'anthropic-ratelimit-unified-status': 'allowed',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': 'allowed',
    'anthropic-ratelimit-unified-5h-utilization': String(options.fiveHour.utilization),
    'anthropic-ratelimit-unified-5h-reset': String(options.fiveHour.reset),
    'anthropic-ratelimit-unified-7d-status': 'allowed',
    'anthropic-ratelimit-unified-7d-utilization': String(options.sevenDay.utilization),
    'anthropic-ratelimit-unified-7d-reset': String(options.sevenDay.reset),
    'anthropic-ratelimit-unified-reset': String(options.fiveHour.reset),
  };
  let sequence = 0;
  return startMock((request, res) => {
    if (!request.path.startsWith('/v1/messages')) return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: request.path } });
    const refusal = options.refusal?.() ?? null;
    if (refusal === 'limit_reached') return limitReached(res, options.fiveHour.reset);
    if (refusal === 'throttled') return json(res, 429, RATE_LIMIT_ERROR, { 'request-id': 'req_mock_throttled', 'retry-after': '2' });
    const spend = options.spend?.() ?? null;
    const headers = spend === null ? windows : { ...windows, ...spendHeaders(spend) };
    if (request.path.startsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: options.inputTokens }, headers);
    const body = (request.body ?? {}) as MessagesBody;
    const turn = options.turn?.(request) ?? { text: 'ok' };
    const id = `msg_mock_${++sequence}`;
    const usage = { input_tokens: options.inputTokens, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const block = 'text' in turn ? { type: 'text', text: turn.text } : { type: 'tool_use', id: `toolu_mock_${sequence}`, name: turn.tool, input: turn.input };
    const stopReason = 'text' in turn ? 'end_turn' : 'tool_use';
    const model = body.model ?? 'claude-sonnet-4-5';
    if (!body.stream) {
      return json(res, 200, { id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null, usage }, headers);
    }
    const start = 'text' in turn ? { type: 'text', text: '' } : { ...block, input: {} };
    const delta = 'text' in turn ? { type: 'text_delta', text: turn.text } : { type: 'input_json_delta', partial_json: JSON.stringify(turn.input) };
    sse(res, headers, [
      {
        event: 'message_start',
        data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: start } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });
}
