import { json, sse, startMock, type MockProvider, type RecordedRequest } from './mock-server.js';

export type GeminiTurn =
  | { readonly text: string }
  | { readonly tool: string; readonly args: Record<string, unknown> }
  /** A per-day quota refusal, as the Gemini API sends it: Gemini CLI does not retry it. */
  | { readonly quotaExhausted: true };

interface GenerateBody {
  readonly contents?: readonly { role?: string; parts?: readonly Record<string, unknown>[] }[];
}

/** True when the last turn sent back a function result: the agent ran (or was refused) the tool the mock asked for. */
export function answersFunctionCall(request: RecordedRequest): boolean {
  const contents = (request.body as GenerateBody | null)?.contents ?? [];
  return (contents[contents.length - 1]?.parts ?? []).some((part) => 'functionResponse' in part);
}

/** Every function response the agent sent back, as text. */
export function functionResponses(requests: readonly RecordedRequest[]): string[] {
  return requests.flatMap((request) =>
    ((request.body as GenerateBody | null)?.contents ?? []).flatMap((content) =>
      (content.parts ?? []).filter((part) => 'functionResponse' in part).map((part) => JSON.stringify(part['functionResponse'])),
    ),
  );
}

const QUOTA_BODY = {
  error: {
    code: 429,
    message:
      'You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 250',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
          },
        ],
      },
    ],
  },
};

/** The Gemini API (`generateContent`, `streamGenerateContent?alt=sse`, `countTokens`) under /v1beta/models/. */
export function startGeminiMock(turn: (request: RecordedRequest) => GeminiTurn): Promise<MockProvider> {
  return startMock((request, res) => {
    const method = /^\/v1beta\/models\/[^/:]+:(\w+)/.exec(request.path)?.[1];
    if (method === 'countTokens') return json(res, 200, { totalTokens: 100 });
    if (method !== 'generateContent' && method !== 'streamGenerateContent')
      return json(res, 404, { error: { code: 404, message: request.path, status: 'NOT_FOUND' } });
    const answer = turn(request);
    if ('quotaExhausted' in answer) return json(res, 429, QUOTA_BODY);
    const part = 'text' in answer ? { text: answer.text } : { functionCall: { name: answer.tool, args: answer.args } };
    const chunk = {
      candidates: [{ content: { parts: [part], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 5, totalTokenCount: 105 },
      modelVersion: 'gemini-2.5-flash',
    };
    if (method === 'generateContent') return json(res, 200, chunk);
    sse(res, {}, [{ data: chunk }]);
  });
}
