import type { FastifyInstance } from 'fastify';
import { CapsuleBodySchema, RepoQuerySchema, type CapsuleBody, type RepoQuery } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function capsuleRoutes(app: FastifyInstance, service: Service): void {
  app.post<{ Body: CapsuleBody }>('/v1/capsule', { schema: { body: CapsuleBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.setCapsule(request.body)),
  );
  app.get<{ Querystring: RepoQuery }>('/v1/capsule', { schema: { querystring: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.showCapsule(request.query.repo)),
  );
}
