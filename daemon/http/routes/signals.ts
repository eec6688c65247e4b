import type { FastifyInstance } from 'fastify';
import { SignalBodySchema, WarningBodySchema, type SignalBody, type WarningBody } from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function signalRoutes(app: FastifyInstance, service: Service): void {
  app.post<{ Body: SignalBody }>('/v1/signals', { schema: { body: SignalBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.signal(request.body)),
  );
  app.post<{ Body: WarningBody }>('/v1/warnings', { schema: { body: WarningBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.warning(request.body)),
  );
}
