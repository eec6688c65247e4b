export { createTakeoverService, type LeaseRecord, type TakeoverService } from './takeover-service.js';
export { cycleRevisions, readManifest, recordedCycles } from './records.js';
