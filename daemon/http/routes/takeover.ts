import type { FastifyInstance } from 'fastify';
import {
  AcceptBodySchema,
  CloseBodySchema,
  CycleQuerySchema,
  ListQuerySchema,
  ReturnBodySchema,
  VerifyBodySchema,
  type AcceptBody,
  type CloseBody,
  type CycleQuery,
  type ListQuery,
  type ReturnBody,
  type VerifyBody,
} from '../../../schemas/index.js';
import type { TakeoverService } from '../../takeover/index.js';
import { sendEnvelope } from '../reply.js';

export function takeoverRoutes(app: FastifyInstance, takeover: TakeoverService): void {
  app.post<{ Body: VerifyBody }>('/v1/verify', { schema: { body: VerifyBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.verify(request.body)),
  );
  app.post<{ Body: AcceptBody }>('/v1/accept', { schema: { body: AcceptBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.accept(request.body)),
  );
  app.post<{ Body: ReturnBody }>('/v1/return', { schema: { body: ReturnBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.returnLeg(request.body)),
  );
  app.post<{ Body: CloseBody }>('/v1/close', { schema: { body: CloseBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.close(request.body)),
  );
  app.get<{ Querystring: ListQuery }>('/v1/cycles', { schema: { querystring: ListQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.list(request.query.repo, request.query.all === 'true')),
  );
  app.get<{ Querystring: CycleQuery }>('/v1/cycle', { schema: { querystring: CycleQuerySchema } }, async (request, reply) =>
    sendEnvelope(reply, await takeover.show(request.query.cycle)),
  );
}
