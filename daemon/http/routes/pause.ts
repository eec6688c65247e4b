import type { FastifyInstance } from 'fastify';
import { PauseBodySchema, type PauseBody } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function pauseRoutes(app: FastifyInstance, service: Service): void {
  app.post<{ Body: PauseBody }>('/v1/pause', { schema: { body: PauseBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.pause(request.body)),
  );
  app.post<{ Body: PauseBody }>('/v1/unpause', { schema: { body: PauseBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.unpause(request.body)),
  );
}
