import { json, sse, startMock, type MockProvider, type RecordedRequest } from './mock-server.js';

/** One answer of the mock: text, a call of one tool, or the 429 a provider sends when the rate limit is hit. */
export type ChatTurn = { readonly text: string } | { readonly tool: string; readonly args: Record<string, unknown> } | { readonly rateLimited: true };

interface ChatMessage {
  readonly role?: string;
  readonly content?: unknown;
}

/** The messages of a chat-completions request body. */
export const messagesOf = (request: RecordedRequest): ChatMessage[] => ((request.body as { messages?: ChatMessage[] } | null)?.messages ?? []) as ChatMessage[];

/** Whether the request answers a tool call (its last message is the tool's result): the model then ends its turn. */
export const answersToolCall = (request: RecordedRequest): boolean => messagesOf(request).at(-1)?.role === 'tool';

/** The tool results the agent sent back to the model, as text. */
export const toolResults = (requests: readonly RecordedRequest[]): string[] =>
  requests.flatMap((request) =>
    messagesOf(request)
      .filter((m) => m.role === 'tool')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
  );

/**
 * An OpenAI-compatible chat-completions API (what OpenCode's `@ai-sdk/openai-compatible` provider,
 * Copilot CLI's BYOK provider and Qwen Code's `openai` auth speak), streaming when asked, with the
 * `x-ratelimit-*` headers OpenAI sends. `next` picks each answer (default: the text).
 */
export function startChatCompletionsMock(options: { text?: string; next?: (request: RecordedRequest) => ChatTurn } = {}): Promise<MockProvider> {
  const headers = {
    'x-ratelimit-limit-requests': '500',
    'x-ratelimit-remaining-requests': '75',
    'x-ratelimit-reset-requests': '6m0s',
    'x-ratelimit-limit-tokens': '200000',
    'x-ratelimit-remaining-tokens': '190000',
    'x-ratelimit-reset-tokens': '3s',
  };
  let sequence = 0;
  return startMock((request, res) => {
    if (request.method === 'GET' && request.path.startsWith('/v1/models'))
      return json(res, 200, { object: 'list', data: [{ id: 'mock-model', object: 'model' }] }, headers);
    if (!request.path.startsWith('/v1/chat/completions')) return json(res, 404, { error: { message: request.path, type: 'invalid_request_error' } });
    const turn = options.next?.(request) ?? { text: options.text ?? 'done' };
    if ('rateLimited' in turn) {
      return json(
        res,
        429,
        {
          error: {
            message: 'Rate limit reached for mock-model on requests per min (RPM): Limit 3, Used 3, Requested 1.',
            type: 'requests',
            code: 'rate_limit_exceeded',
          },
        },
        { ...headers, 'x-ratelimit-remaining-requests': '0', 'retry-after': '1' },
      );
    }
    const id = `chatcmpl-mock-${++sequence}`;
    const usage = { prompt_tokens: 1000, completion_tokens: 5, total_tokens: 1005 };
    const base = { id, object: 'chat.completion.chunk', created: 1_787_000_000, model: 'mock-model' };
    const call =
      'tool' in turn ? { index: 0, id: `call_mock_${sequence}`, type: 'function', function: { name: turn.tool, arguments: JSON.stringify(turn.args) } } : null;
    const message = call === null ? { role: 'assistant', content: 'text' in turn ? turn.text : '' } : { role: 'assistant', content: null, tool_calls: [call] };
    const finish = call === null ? 'stop' : 'tool_calls';
    if (!(request.body as { stream?: boolean } | null)?.stream) {
      return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }, headers);
    }
    sse(res, headers, [
      { data: { ...base, choices: [{ index: 0, delta: message, finish_reason: null }] } },
      { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage } },
      { data: '[DONE]' },
    ]);
  });
}
