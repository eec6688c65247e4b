/** The daemon's directory in every checkout: records, capsule, lease, PAUSE. */
export const WORKSPACE_DIR = '.session-handoff';

/**
 * The pathspec that keeps the daemon's own files out of what git lists or adds, whatever the
 * repository's ignore rules say: a committed `.gitignore` line (`!/.session-handoff/`) outranks
 * `.git/info/exclude`, and then each package written would change the tree just snapshotted.
 * Bracketed, so no literal prefix names the directory: `git add` reports an ignored directory an
 * exclude pathspec names literally as "ignored" and exits 1 (git 2.39).
 */
export const OWN_FILES_EXCLUDE = `:(exclude,top,glob)[.]${WORKSPACE_DIR.slice(1)}/**`;
