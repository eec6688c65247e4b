export { createRehearsals, type RehearsalDeps, type Rehearsals } from './rehearsal-service.js';
