import type { FastifyInstance } from 'fastify';
import { success } from '../../../protocol/index.js';
import { IngestBodySchema, IngestParamsSchema, type IngestBody, type IngestParams } from '../../../schemas/ingest.schema.js';
import type { IngestService } from '../../ingest/index.js';
import { sendEnvelope } from '../reply.js';

export function ingestRoutes(app: FastifyInstance, ingest: IngestService): void {
  app.post<{ Params: IngestParams; Body: IngestBody }>(
    '/v1/ingest/:adapter',
    { schema: { params: IngestParamsSchema, body: IngestBodySchema } },
    async (request, reply) => sendEnvelope(reply, success('ingested', await ingest.ingest({ adapter: request.params.adapter, ...request.body }))),
  );
}
