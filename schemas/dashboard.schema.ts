import { Type } from '@sinclair/typebox';

/** Queries of the dashboard's routes (daemon/http/dashboard/): one schema each, for fastify, the types and the OpenAPI file. */

export const DashboardLoginQuerySchema = Type.Object(
  { ticket: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'the one-time ticket of `POST /v1/dashboard/link`' }) },
  { additionalProperties: false },
);

export const DashboardCycleQuerySchema = Type.Object(
  {
    workspace: Type.String({ minLength: 1, maxLength: 4096, description: 'a workspace root the dashboard lists' }),
    cycle: Type.String({ pattern: '^[0-9]{8}T[0-9]{6}Z-[a-z2-7]{6}$', description: 'a cycle id recorded in that workspace' }),
  },
  { additionalProperties: false },
);
