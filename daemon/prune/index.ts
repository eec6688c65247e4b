export { createPruneService, type PruneDeps, type PruneResult, type PruneService, type PrunedCycle, type RefFate, type RefOutcome } from './prune-service.js';
export { createCycleLedger, recordOrigin, type CycleLedger } from './cycle-ledger.js';
