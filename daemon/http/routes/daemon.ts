import type { FastifyInstance } from 'fastify';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function daemonRoutes(app: FastifyInstance, service: Service): void {
  app.post('/v1/daemon/stop', async (_request, reply) => sendEnvelope(reply, service.stop()));
}
