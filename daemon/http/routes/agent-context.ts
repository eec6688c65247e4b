import type { FastifyInstance } from 'fastify';
import { AgentContextBodySchema, type AgentContextBody } from '../../../schemas/index.js';
import type { AgentContextService } from '../../agent-context/index.js';
import { sendEnvelope } from '../reply.js';

export function agentContextRoutes(app: FastifyInstance, agentContext: AgentContextService): void {
  app.post<{ Body: AgentContextBody }>('/v1/agent-context', { schema: { body: AgentContextBodySchema } }, async (request, reply) =>
    sendEnvelope(reply, await agentContext.tell(request.body)),
  );
}
