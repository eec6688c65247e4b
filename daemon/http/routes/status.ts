import type { FastifyInstance } from 'fastify';
import { StatusQuerySchema, type StatusQuery } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function statusRoutes(app: FastifyInstance, service: Service): void {
  app.get<{ Querystring: StatusQuery }>('/v1/status', { schema: { querystring: StatusQuerySchema } }, async (request, reply) => {
    const { repo, after_change, wait_ms } = request.query;
    const poll = after_change === undefined ? null : { afterChange: Number(after_change), waitMs: wait_ms === undefined ? null : Number(wait_ms) };
    return sendEnvelope(reply, await service.status(repo, poll));
  });
}
