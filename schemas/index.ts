export * from './api.schema.js';
export * from './config.schema.js';
export * from './lease.schema.js';
export * from './remote-records.schema.js';
export * from './telemetry.schema.js';
export * from './capsule.schema.js';
export * from './manifest.schema.js';
export * from './agent-context.schema.js';
