export { dataArg } from './data-arg.js';
export { CONFIG_OVERRIDES, gitEnv, SSH_COMMAND } from './git-env.js';
export { chooseRemote, inspectRepository, instructionFiles, parseStatus } from './inspect.js';
export { publishRefs, publishRoute, pushFailure, pushWords, type PublishResult, type PublishRoute, type PushFailure, type RefUpdate } from './publish.js';
export { OWN_FILES_EXCLUDE, WORKSPACE_DIR } from './own-files.js';
export { gitPath, resolveRepoRoot } from './repo-root.js';
export { asCommitted, blobIds, cameThroughGit } from './tracked.js';
export { lfsPointers, probeLfsEndpoint, smudgePins, type LfsProbe } from './lfs.js';
export { resolveGit } from './process-group.js';
export { git, GitError, runGit, type GitOptions, type GitResult } from './run-git.js';
export {
  currentRef,
  headAndIndex,
  snapshotWorkTree,
  workTreeSnapshot,
  treeOfWorkTree,
  type HeadAndIndex,
  type SnapshotResult,
  type StagedAudit,
  type StagedEntry,
  type WorkTreeSnapshot,
} from './snapshot.js';
export { fetchObjectsOf, isObjectId, readBlobBytes, readBlobsAt, type BlobBytes, type BlobRead } from './object-batch.js';
export {
  boundedFilesAt,
  commitFiles,
  fetchRecordsRef,
  fetchRecordsRefs,
  pushRecordsRef,
  type RecordBounds,
  type RefFetch,
  type RefPush,
} from './records-ref.js';
export {
  checkedOutBranches,
  cycleOfRef,
  deleteLocalRefs,
  deleteRemoteRefs,
  localHandoffRefs,
  remoteHandoffRefs,
  type HandoffRef,
  type RemoteHandoffRef,
  type LocalDeletion,
} from './prune-refs.js';
