import { json, sse, startMock, type MockProvider } from './mock-server.js';

export interface CodexWindow {
  readonly usedPercent: number;
  readonly windowMinutes: number;
  /** Epoch seconds. */
  readonly resetAt: number;
}

/**
 * The OpenAI Responses API as Codex CLI streams it, with the `x-codex-{primary,secondary}-*` headers
 * ChatGPT-plan responses carry: Codex copies them into the `rate_limits` of its rollout's token_count events.
 */
export function startResponsesMock(options: { primary: CodexWindow; secondary: CodexWindow; inputTokens: number; text?: string }): Promise<MockProvider> {
  const headers: Record<string, string> = {};
  for (const [slot, window] of [
    ['primary', options.primary],
    ['secondary', options.secondary],
  ] as const) {
    headers[`x-codex-${slot}-used-percent`] = String(window.usedPercent);
    headers[`x-codex-${slot}-window-minutes`] = String(window.windowMinutes);
    headers[`x-codex-${slot}-reset-at`] = String(window.resetAt);
  }
  let sequence = 0;
  return startMock((request, res) => {
    if (request.method === 'GET' && request.path.startsWith('/v1/models')) return json(res, 200, { object: 'list', data: [] }, headers);
    if (!request.path.startsWith('/v1/responses')) return json(res, 404, { error: { message: request.path, type: 'invalid_request_error' } });
    const id = `resp_mock_${++sequence}`;
    const item = {
      type: 'message',
      id: `msg_mock_${sequence}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: options.text ?? 'done', annotations: [] }],
    };
    const usage = {
      input_tokens: options.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: options.inputTokens + 12,
    };
    sse(res, headers, [
      { event: 'response.created', data: { type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } } },
      {
        event: 'response.output_item.added',
        data: { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
      },
      {
        event: 'response.output_text.delta',
        data: { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: options.text ?? 'done' },
      },
      { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
      { event: 'response.completed', data: { type: 'response.completed', response: { id, object: 'response', status: 'completed', output: [item], usage } } },
    ]);
  });
}
