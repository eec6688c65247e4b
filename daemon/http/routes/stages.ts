import type { FastifyInstance } from 'fastify';
import { StageBodySchema, type StageBody } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function stageRoutes(app: FastifyInstance, service: Service): void {
  app.post<{ Body: StageBody }>('/v1/prepare', { schema: { body: StageBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.prepare(request.body)),
  );
  app.post<{ Body: StageBody }>('/v1/now', { schema: { body: StageBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.now(request.body)),
  );
}
