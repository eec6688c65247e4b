import type { FastifyInstance } from 'fastify';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function daemonRoutes(app: FastifyInstance, service: Service): void {
  // Shut down only once the answer has left, so the caller learns that the stop was taken.
  app.post('/v1/daemon/stop', { onResponse: async () => service.stop() }, async (_request, reply) => sendEnvelope(reply, service.stopping()));
}
