import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance } from 'fastify';
import { CODES, failure, fromError, isHandoffError, type Code, type Envelope } from '../../protocol/index.js';
import { describeErrors } from '../schema-check.js';

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
  const disk = diskProblem(error);
  if (disk !== null) return failure('internal_error', disk.message, disk.hint);
  return failure(
    'internal_error',
    'the daemon failed to handle this request; the cause is in its log',
    'retry; if it persists, read the daemon log in the state dir',
  );
}

const DISK_PROBLEMS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a file is where a directory should be',
  EISDIR: 'a directory is where a file should be',
  ELOOP: 'a symbolic link is in the way',
  EEXIST: 'a file is in the way',
};

/** A file-system failure (its own or the cause of one), said plainly with the path: a full disk is not a bug. */
function diskProblem(error: Error): { message: string; hint: string } | null {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const { code, path } = current as NodeJS.ErrnoException;
    const what = code === undefined ? undefined : DISK_PROBLEMS[code];
    if (what !== undefined) {
      return {
        message: `${path === undefined ? 'a file write' : `writing ${path}`} failed: ${what} (${code})`,
        hint: 'fix the cause (free space, make it writable, move what is in the way), then retry',
      };
    }
  }
  return null;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const envelope = toEnvelope(error);
    const status = CODES[envelope.code].status;
    if (status >= 500) request.log.error({ err: error, reqId: request.id }, 'request failed');
    return reply.code(status).send(envelope);
  });
  app.setNotFoundHandler((request, reply) => {
    const envelope = failure('not_found', `no route ${request.method} ${request.url.split('?')[0] ?? ''}`, 'see docs/http-api.md; every route is under /v1/');
    return reply.code(404).send(envelope);
  });
}

/**
 * A request node's HTTP parser refused (conflicting lengths, bad chunks, headers over the limit, a
 * client too slow) never reaches a route; it gets a 400 Envelope like every other refusal, then the
 * connection closes. A connection already gone is left alone, as fastify's own handler does.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const why =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'its headers are over the size limit'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'it did not arrive in time'
        : `it is not well-formed HTTP/1.1 (${error.code ?? 'parse error'})`;
  const body = JSON.stringify(
    failure('invalid_body', `the request was refused before any route: ${why}`, 'send one well-formed request with a single Content-Length or chunked body'),
  );
  if (socket.writable)
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}
