import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginCallback } from 'fastify';
import { success } from '../../../protocol/index.js';
import {
  AcceptBodySchema,
  AgentContextBodySchema,
  CapsuleBodySchema,
  CloseBodySchema,
  CycleQuerySchema,
  CyclePrefixQuerySchema,
  HelloBodySchema,
  LeaseAcquireBodySchema,
  LeaseBreakBodySchema,
  LeaseTokenBodySchema,
  ListQuerySchema,
  NowBodySchema,
  OperationCancelBodySchema,
  PruneBodySchema,
  PauseBodySchema,
  RepoQuerySchema,
  ReturnBodySchema,
  SignalBodySchema,
  StageBodySchema,
  StatusQuerySchema,
  VerifyBodySchema,
  WarningBodySchema,
} from '../../../schemas/index.js';
import { IngestBodySchema, IngestParamsSchema } from '../../../schemas/ingest.schema.js';
import type { AgentContextService } from '../../agent-context/index.js';
import type { IngestService } from '../../ingest/index.js';
import type { Operations } from '../../operations/index.js';
import type { PruneService } from '../../prune/index.js';
import type { Service } from '../../service.js';
import type { TakeoverService } from '../../takeover/index.js';
import type { Dashboard } from '../dashboard/index.js';
import { helloAnswer, type HelloDeps } from '../hello.js';
import { followed } from '../followed.js';
import { afterAnswer, sendEnvelope } from '../reply.js';
import { route, type ApiRoute } from './typed-route.js';

/** The one place the JSON API's version prefix is written; every row's url is relative to it. */
export const V1_PREFIX = '/v1';

export interface V1Deps {
  readonly service: Service;
  readonly takeover: TakeoverService;
  readonly ingest: IngestService;
  /** The long requests at work (accept, verify), which the CLI follows and may cancel. */
  readonly operations: Operations;
  /** `POST /v1/prune`: the finished cycles' handoff refs. */
  readonly prune: PruneService;
  /** Without it, `POST /v1/agent-context` is not served. */
  readonly agentContext?: AgentContextService | undefined;
  readonly hello: HelloDeps;
  /** Without it, the dashboard's JSON side (`POST /v1/dashboard/link`, `GET /v1/workspaces`) is not served. */
  readonly dashboard?: Pick<Dashboard, 'service' | 'issueLink'> | undefined;
}

/** Query strings are not coerced (the schema takes digits); the long poll wants numbers. */
const pollOf = (query: { after_change?: string | undefined; wait_ms?: string | undefined }) =>
  query.after_change === undefined ? null : { afterChange: Number(query.after_change), waitMs: query.wait_ms === undefined ? null : Number(query.wait_ms) };

/**
 * Every route of the JSON API (docs/http-api.md), by resource. Handlers only hand the validated input
 * to a service and send its Envelope; what a route means is documented in daemon/http/openapi.ts.
 */
export function v1Routes(deps: V1Deps): readonly ApiRoute[] {
  const { service, takeover, ingest, operations, prune, agentContext, hello, dashboard } = deps;
  return [
    // Unauthenticated by design (security.ts reads the flag): a client asks before it has shown the token.
    route({
      method: 'POST',
      url: '/hello',
      schema: { body: HelloBodySchema },
      config: { unauthenticated: true },
      handler: async (request, reply) => sendEnvelope(reply, helloAnswer(hello, request.body.nonce)),
    }),

    // Status and telemetry
    route({
      method: 'GET',
      url: '/status',
      schema: { querystring: StatusQuerySchema },
      handler: async (request, reply) =>
        sendEnvelope(
          reply,
          await service.status(
            request.query.repo,
            pollOf(request.query),
            request.query.lease_wait_ms === undefined ? null : Number(request.query.lease_wait_ms),
          ),
        ),
    }),
    route({
      method: 'POST',
      url: '/signals',
      schema: { body: SignalBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.signal(request.body)),
    }),
    route({
      method: 'POST',
      url: '/warnings',
      schema: { body: WarningBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.warning(request.body)),
    }),
    route({
      method: 'POST',
      url: '/ingest/:adapter',
      schema: { params: IngestParamsSchema, body: IngestBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, success('ingested', await ingest.ingest({ adapter: request.params.adapter, ...request.body }))),
    }),

    // Stages
    route({
      method: 'POST',
      url: '/prepare',
      schema: { body: StageBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.prepare(request.body)),
    }),
    route({
      method: 'POST',
      url: '/now',
      schema: { body: NowBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.now(request.body)),
    }),
    route({
      method: 'POST',
      url: '/rehearse',
      schema: { body: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.rehearse(request.body.repo)),
    }),
    route({
      method: 'POST',
      url: '/drained',
      schema: { body: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.drained(request.body.repo)),
    }),
    route({
      method: 'POST',
      url: '/resume',
      schema: { body: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.resume(request.body.repo)),
    }),
    route({
      method: 'POST',
      url: '/cancel',
      schema: { body: StageBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.cancel(request.body)),
    }),
    route({
      method: 'GET',
      url: '/check',
      schema: { querystring: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.check(request.query.repo)),
    }),

    // The capsule
    route({
      method: 'POST',
      url: '/capsule',
      schema: { body: CapsuleBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.setCapsule(request.body)),
    }),
    route({
      method: 'GET',
      url: '/capsule',
      schema: { querystring: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.showCapsule(request.query.repo)),
    }),

    // Takeover and cycles
    route({
      method: 'POST',
      url: '/verify',
      schema: { body: VerifyBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await followed(operations, request, reply, 'verify', (op) => takeover.verify(request.body, op))),
    }),
    route({
      method: 'POST',
      url: '/accept',
      schema: { body: AcceptBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await followed(operations, request, reply, 'accept', (op) => takeover.accept(request.body, op))),
    }),
    route({
      method: 'POST',
      url: '/return',
      schema: { body: ReturnBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.returnLeg(request.body)),
    }),
    route({
      method: 'POST',
      url: '/close',
      schema: { body: CloseBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.close(request.body)),
    }),
    route({
      method: 'GET',
      url: '/cycles',
      schema: { querystring: ListQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await takeover.list(request.query.repo, request.query.all === 'true')),
    }),
    route({
      method: 'GET',
      url: '/cycles/resolve',
      schema: { querystring: CyclePrefixQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await takeover.resolve(request.query.prefix)),
    }),
    route({
      method: 'GET',
      url: '/cycle',
      schema: { querystring: CycleQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await takeover.show(request.query.cycle)),
    }),
    route({
      method: 'POST',
      url: '/prune',
      schema: { body: PruneBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await prune.prune(request.body)),
    }),

    // Long requests at work: the CLI's liveness request while it follows one, and its Ctrl-C
    route({
      method: 'GET',
      url: '/operations',
      handler: async (_request, reply) => sendEnvelope(reply, success('operations', { operations: operations.list() })),
    }),
    route({
      method: 'POST',
      url: '/operations/cancel',
      schema: { body: OperationCancelBodySchema },
      handler: async (request, reply) => {
        const cancelled = operations.cancel(request.body.operation);
        return sendEnvelope(reply, success('operations', { operations: cancelled === null ? [] : [cancelled] }));
      },
    }),

    // The lease
    route({
      method: 'GET',
      url: '/lease',
      schema: { querystring: RepoQuerySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.lease(request.query.repo)),
    }),
    route({
      method: 'POST',
      url: '/lease/acquire',
      schema: { body: LeaseAcquireBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.acquire(request.body)),
    }),
    route({
      method: 'POST',
      url: '/lease/renew',
      schema: { body: LeaseTokenBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.renew(request.body)),
    }),
    route({
      method: 'POST',
      url: '/lease/release',
      schema: { body: LeaseTokenBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.release(request.body)),
    }),
    route({
      method: 'POST',
      url: '/lease/break',
      schema: { body: LeaseBreakBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.breakLease(request.body)),
    }),

    // The kill switch and the daemon
    route({
      method: 'POST',
      url: '/pause',
      schema: { body: PauseBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.pause(request.body)),
    }),
    route({
      method: 'POST',
      url: '/unpause',
      schema: { body: PauseBodySchema },
      handler: async (request, reply) => sendEnvelope(reply, await service.unpause(request.body)),
    }),
    route({
      method: 'POST',
      url: '/config/reload',
      handler: async (_request, reply) => sendEnvelope(reply, await service.reloadConfig()),
    }),
    route({
      method: 'POST',
      url: '/daemon/stop',
      // Shut down only once the answer has left, so the caller learns that the stop was taken.
      handler: async (_request, reply) => {
        afterAnswer(reply, () => service.stop());
        return sendEnvelope(reply, service.stopping());
      },
    }),

    // What each stage asks of an agent session (the agent hooks)
    ...(agentContext === undefined
      ? []
      : [
          route({
            method: 'POST',
            url: '/agent-context',
            schema: { body: AgentContextBodySchema },
            handler: async (request, reply) => sendEnvelope(reply, await agentContext.tell(request.body)),
          }),
        ]),

    // The dashboard's JSON side (bearer token, no Origin): what `handoff open` and scripts call
    ...(dashboard === undefined
      ? []
      : [
          route({
            method: 'POST',
            url: '/dashboard/link',
            handler: async (_request, reply) => sendEnvelope(reply, success('dashboard_link', dashboard.issueLink())),
          }),
          route({ method: 'GET', url: '/workspaces', handler: async (_request, reply) => sendEnvelope(reply, await dashboard.service.workspaces()) }),
        ]),
  ];
}

/** The table as one encapsulated plugin: the root's hooks (security, errors, body limit) hold inside it. */
export function v1Plugin(routes: readonly ApiRoute[]): FastifyPluginCallback {
  return (app, _options, done) => {
    const typed = app.withTypeProvider<TypeBoxTypeProvider>();
    for (const row of routes) row.register(typed);
    done();
  };
}
