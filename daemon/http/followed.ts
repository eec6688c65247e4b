import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Envelope } from '../../protocol/index.js';
import { OPERATION_HEADER, type Operation, type Operations } from '../operations/index.js';

/**
 * Runs a long request as an operation others can see and cancel. A caller that goes away before the
 * answer (Ctrl-C, a CLI that stopped waiting) cancels it: nobody would hear what it did, so it may
 * do nothing from then on, up to its point of no return (Progress.commit).
 */
export async function followed(
  operations: Operations,
  request: FastifyRequest,
  reply: FastifyReply,
  what: string,
  run: (op: Operation) => Promise<Envelope>,
): Promise<Envelope> {
  const asked = request.headers[OPERATION_HEADER];
  const op = operations.begin(typeof asked === 'string' ? asked : null, what);
  const gone = () => {
    if (!reply.raw.writableFinished) op.cancel();
  };
  reply.raw.once('close', gone);
  try {
    return await run(op);
  } finally {
    op.end();
  }
}
