import type { FastifyInstance } from 'fastify';
import { RepoQuerySchema, type RepoQuery } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function statusRoutes(app: FastifyInstance, service: Service): void {
  app.get<{ Querystring: RepoQuery }>('/v1/status', { schema: { querystring: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.status(request.query.repo)),
  );
}
