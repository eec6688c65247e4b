export { createTakeoverService, type TakeoverService } from './takeover-service.js';
export type { LeaseRecord } from '../lease/lease-record.js';
export { cycleRevisions, readManifest, recordedCycles } from './records.js';
export { createLeaseSync, type LeaseSync, type LeaseSyncStatus } from './lease-sync.js';
export { cloneOffers, type CloneOffer } from './clone-offers.js';
