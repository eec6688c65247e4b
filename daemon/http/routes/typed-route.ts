import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyInstance,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteOptions,
} from 'fastify';

/**
 * The API's fastify instance with the TypeBox type provider: a handler's `request.body`, `query` and
 * `params` are the `Static` of the route's own schemas, so no route repeats its schema as a type.
 * Only types come from the provider package; validation stays on the precompiled validators.
 */
export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

type TypedRouteOptions<S extends FastifySchema> = RouteOptions<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

/** One row of a route table: what it answers, and how it adds itself to the typed instance. */
export interface ApiRoute {
  readonly method: 'GET' | 'POST';
  /** Relative to the prefix the table is registered under. */
  readonly url: string;
  readonly schema: FastifySchema | undefined;
  register(app: TypedApp): void;
}

/**
 * A row's own lifecycle hooks are not offered: fastify runs them for a request the security hook
 * refused as well, so an effect there would run unaccepted. Effects live in the handler.
 */
type RouteHook =
  'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend' | 'onResponse' | 'onTimeout' | 'onError' | 'onRequestAbort';

/**
 * A row whose handler is typed by its schema. The rows of a table each have their own schema type;
 * keeping the typed options inside `register` lets them share one row type without a cast.
 */
export function route<S extends FastifySchema>(options: Omit<TypedRouteOptions<S>, 'method' | RouteHook> & { readonly method: ApiRoute['method'] }): ApiRoute {
  return {
    method: options.method,
    url: options.url,
    schema: options.schema,
    register: (app) => void app.route<RouteGenericInterface, ContextConfigDefault, S>(options),
  };
}
