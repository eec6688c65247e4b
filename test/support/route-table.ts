import { v1Routes } from '../../daemon/http/routes/v1-routes.js';

// No handler runs where this table is used: only its rows (method, url, schema) are read.
const unused = {} as never;

/** The /v1 route table as the daemon builds it, with every optional service present. */
export const servedV1Routes = (hello: Parameters<typeof v1Routes>[0]['hello'] = unused) =>
  v1Routes({ service: unused, takeover: unused, prune: unused, ingest: unused, operations: unused, agentContext: unused, dashboard: unused, hello });
