export type { TailStatus } from './codex-tail.js';
export { startCodexWatch } from './codex-watch.js';
export { startGeminiWatch } from './gemini-watch.js';
export { startEventSpool } from './event-spool.js';
export { createIngestService, type IngestRequest, type IngestService } from './ingest-service.js';
export { cachedRootResolver } from './root-cache.js';
