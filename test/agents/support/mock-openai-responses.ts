import { json, sse, startMock, type MockProvider, type RecordedRequest } from './mock-server.js';

/** One answer of the mock: text, or a call of one of Codex's function tools (`exec_command` with `{cmd}`: its shell). */
export type ResponsesTurn = { readonly text: string } | { readonly call: string; readonly args: Record<string, unknown> };

/** The outputs of Codex's function calls in a request (`function_call_output` input items), as text. */
export const functionOutputs = (requests: readonly RecordedRequest[]): string[] =>
  requests.flatMap((request) =>
    (((request.body as { input?: unknown } | null)?.input ?? []) as { type?: string; output?: unknown }[])
      .filter((item) => item.type === 'function_call_output')
      .map((item) => (typeof item.output === 'string' ? item.output : JSON.stringify(item.output))),
  );

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
export function startResponsesMock(options: {
  primary: CodexWindow;
  secondary: CodexWindow;
  inputTokens: number;
  text?: string;
  /** Decides each answer; the default answers `text`. */
  next?: (request: RecordedRequest) => ResponsesTurn;
}): Promise<MockProvider> {
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
    const turn = options.next?.(request) ?? { text: options.text ?? 'done' };
    const text = 'text' in turn ? turn.text : '';
    const item =
      'call' in turn
        ? {
            type: 'function_call',
            id: `fc_mock_${sequence}`,
            call_id: `call_mock_${sequence}`,
            name: turn.call,
            arguments: JSON.stringify(turn.args),
            status: 'completed',
          }
        : { type: 'message', id: `msg_mock_${sequence}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
    const usage = {
      input_tokens: options.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: options.inputTokens + 12,
    };
    sse(res, headers, [
      { event: 'response.created', data: { type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } } },
      ...('call' in turn
        ? []
        : [
            {
              event: 'response.output_item.added',
              data: { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
            },
            {
              event: 'response.output_text.delta',
              data: { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text },
            },
          ]),
      { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
      { event: 'response.completed', data: { type: 'response.completed', response: { id, object: 'response', status: 'completed', output: [item], usage } } },
    ]);
  });
}
