import type { FastifyInstance } from 'fastify';
import { NowBodySchema, RepoQuerySchema, StageBodySchema, type NowBody, type RepoQuery, type StageBody } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function stageRoutes(app: FastifyInstance, service: Service): void {
  app.post<{ Body: StageBody }>('/v1/prepare', { schema: { body: StageBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.prepare(request.body)),
  );
  app.post<{ Body: NowBody }>('/v1/now', { schema: { body: NowBodySchema } }, async (request, reply) => sendEnvelope(reply, await service.now(request.body)));
  app.post<{ Body: RepoQuery }>('/v1/drained', { schema: { body: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.drained(request.body.repo)),
  );
  app.post<{ Body: RepoQuery }>('/v1/resume', { schema: { body: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.resume(request.body.repo)),
  );
  app.post<{ Body: StageBody }>('/v1/cancel', { schema: { body: StageBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.cancel(request.body)),
  );
  app.get<{ Querystring: RepoQuery }>('/v1/check', { schema: { querystring: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.check(request.query.repo)),
  );
}
