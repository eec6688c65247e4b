import type { FastifyReply } from 'fastify';
import { CODES, type Envelope } from '../../protocol/index.js';

export function sendEnvelope(reply: FastifyReply, envelope: Envelope): FastifyReply {
  return reply.code(CODES[envelope.code].status).send(envelope);
}
