import type { FastifyError, FastifyInstance } from 'fastify';
import { CODES, failure, fromError, isHandoffError, type Code, type Envelope } from '../../protocol/index.js';
import { describeErrors } from '../validation.js';

const FASTIFY_CODES: Readonly<Record<string, Code>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
};

const HINTS: Partial<Record<Code, string>> = {
  body_too_large: 'send a smaller body; the limit is in the config (body_limit_bytes)',
  unsupported_media_type: 'send the body as application/json',
  malformed_json: 'send one valid JSON object',
};

/** Every failure leaves as an Envelope with a 4xx (or a bare 500 `internal_error`), never a stack. */
export function toEnvelope(error: FastifyError | Error): Envelope {
  if (isHandoffError(error)) return fromError(error);
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const where = fastifyError.validationContext ?? 'body';
    return failure('invalid_body', describeErrors(fastifyError.validation as never, where), 'see docs/http-api.md for the schema of this route');
  }
  const mapped = FASTIFY_CODES[fastifyError.code] ?? (error instanceof SyntaxError ? 'malformed_json' : undefined);
  if (mapped !== undefined) return failure(mapped, error.message, HINTS[mapped] ?? CODES[mapped].summary);
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return failure('invalid_body', error.message, 'check the request against docs/http-api.md');
  }
  return failure('internal_error', 'the daemon failed to handle this request; the cause is in its log', 'retry; if it persists, read the daemon log in the state dir');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const envelope = toEnvelope(error);
    const status = CODES[envelope.code].status;
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(status).send(envelope);
  });
  app.setNotFoundHandler((request, reply) => {
    const envelope = failure('not_found', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`, 'see docs/http-api.md; every route is under /v1/');
    return reply.code(404).send(envelope);
  });
}
