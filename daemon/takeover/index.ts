export { createTakeoverService, type LeaseRecord, type TakeoverService } from './takeover-service.js';
export { cycleRevisions, readManifest, recordedCycles } from './records.js';
export { createLeaseSync, type LeaseSync, type LeaseSyncStatus } from './lease-sync.js';
