import type { FastifyReply } from 'fastify';
import { CODES, type Envelope } from '../../protocol/index.js';

export function sendEnvelope(reply: FastifyReply, envelope: Envelope): FastifyReply {
  return reply.code(CODES[envelope.code].status).send(envelope);
}

/**
 * Runs a route's effect once its answer has left, from the handler: fastify runs a route's own
 * `onResponse` hook for the refusals of the security hook too (401/403), so no effect lives there.
 */
export function afterAnswer(reply: FastifyReply, effect: () => void): void {
  reply.raw.once('close', effect);
}
