import type { FastifyInstance } from 'fastify';
import { PROTOCOL_VERSION, success } from '../../../protocol/index.js';
import { HelloBodySchema, type HelloBody } from '../../../schemas/index.js';
import { helloProof } from '../hello.js';
import { sendEnvelope } from '../reply.js';

export const HELLO_PATH = '/v1/hello';

export interface HelloDeps {
  readonly token: string;
  readonly port: () => number;
  readonly pid: number;
}

/** Unauthenticated by design (security.ts reads the flag): a client asks before it has shown the token. */
export function helloRoutes(app: FastifyInstance, deps: HelloDeps): void {
  app.post<{ Body: HelloBody }>(HELLO_PATH, { schema: { body: HelloBodySchema }, config: { unauthenticated: true } }, async (request, reply) => {
    const facts = { nonce: request.body.nonce, port: deps.port(), pid: deps.pid };
    return sendEnvelope(reply, success('ok', { pid: facts.pid, port: facts.port, protocol_version: PROTOCOL_VERSION, proof: helloProof(deps.token, facts) }));
  });
}
