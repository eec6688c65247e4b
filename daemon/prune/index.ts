export { createPruneService, type PruneDeps, type PruneResult, type PruneService, type PrunedCycle, type RefFate } from './prune-service.js';
