export { AlreadyExistsError, fsyncDir, writeFileAtomic, writeFileCreateOnce } from './atomic-write.js';
export {
  compactionPath,
  DEFAULT_MAX_RECORD_BYTES,
  Journal,
  JournalClosedError,
  JournalFailedError,
  type JournalOptions,
  type JournalStats,
} from './journal.js';
export type { TornTail } from './journal-format.js';
export { openStateDir, resolveStateDir, TOKEN_FILE, type StateDir } from './state-dir.js';
export {
  DAEMON_INFO_FILE,
  readDaemonInfo,
  removeDaemonInfo,
  writeDaemonInfo,
  type DaemonInfo,
} from './daemon-info.js';
export { acquireInstanceGuard, LOCK_FILE, type InstanceGuard } from './instance-guard.js';
export { isProcessAlive } from './process-liveness.js';
