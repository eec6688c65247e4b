import type { FastifyInstance } from 'fastify';
import {
  LeaseAcquireBodySchema,
  LeaseBreakBodySchema,
  LeaseTokenBodySchema,
  RepoQuerySchema,
  type LeaseAcquireBody,
  type LeaseBreakBody,
  type LeaseTokenBody,
  type RepoQuery,
} from '../../../schemas/index.js';
import type { Service } from '../../service.js';
import { sendEnvelope } from '../reply.js';

export function leaseRoutes(app: FastifyInstance, service: Service): void {
  app.get<{ Querystring: RepoQuery }>('/v1/lease', { schema: { querystring: RepoQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.lease(request.query.repo)),
  );
  app.post<{ Body: LeaseAcquireBody }>('/v1/lease/acquire', { schema: { body: LeaseAcquireBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.acquire(request.body)),
  );
  app.post<{ Body: LeaseTokenBody }>('/v1/lease/renew', { schema: { body: LeaseTokenBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.renew(request.body)),
  );
  app.post<{ Body: LeaseTokenBody }>('/v1/lease/release', { schema: { body: LeaseTokenBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.release(request.body)),
  );
  app.post<{ Body: LeaseBreakBody }>('/v1/lease/break', { schema: { body: LeaseBreakBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await service.breakLease(request.body)),
  );
}
