export { AlreadyExistsError, fsyncDir, writeFileAtomic, writeFileCreateOnce } from './atomic-write.js';
export {
  compactionPath,
  DEFAULT_MAX_RECORD_BYTES,
  Journal,
  JOURNAL_FILE,
  JournalClosedError,
  JournalFailedError,
  type JournalOptions,
  type JournalStats,
} from './journal.js';
export type { TornTail } from './journal-format.js';
export { repairJournal, type JournalRepair } from './journal-repair.js';
export { openStateDir, readClientToken, resolveStateDir, TOKEN_FILE, type StateDir } from './state-dir.js';
export { rotateToken } from './token-file.js';
export { assertPrivate } from './private-path.js';
export { DAEMON_INFO_FILE, SOCKET_FILE, readDaemonInfo, removeDaemonInfo, writeDaemonInfo, type DaemonInfo } from './daemon-info.js';
export { acquireInstanceGuard, LOCK_FILE, type InstanceGuard } from './instance-guard.js';
export { isProcessAlive } from './process-liveness.js';
