import { json, sse, startMock, type MockProvider } from './mock-server.js';

/**
 * An OpenAI-compatible chat-completions API (what OpenCode's `@ai-sdk/openai-compatible` provider
 * speaks), streaming when asked, with the `x-ratelimit-*` headers OpenAI sends.
 */
export function startChatCompletionsMock(options: { text?: string } = {}): Promise<MockProvider> {
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
    const id = `chatcmpl-mock-${++sequence}`;
    const text = options.text ?? 'done';
    const usage = { prompt_tokens: 1000, completion_tokens: 5, total_tokens: 1005 };
    const base = { id, object: 'chat.completion.chunk', created: 1_787_000_000, model: 'mock-model' };
    if (!(request.body as { stream?: boolean } | null)?.stream) {
      return json(
        res,
        200,
        { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage },
        headers,
      );
    }
    sse(res, headers, [
      { data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }] } },
      { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage } },
      { data: '[DONE]' },
    ]);
  });
}
