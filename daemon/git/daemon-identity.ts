/**
 * The author and committer of every commit the daemon makes (snapshots, records, the rehearsal's
 * package, the LFS probe): its own name, never the user's, so no user config or signing is involved.
 * With a date, the commit is reproducible from its inputs; without one, git stamps the time.
 */
export function daemonCommitEnv(date?: string): Record<string, string> {
  const identity = {
    GIT_AUTHOR_NAME: 'session-handoff',
    GIT_AUTHOR_EMAIL: 'session-handoff@localhost',
    GIT_COMMITTER_NAME: 'session-handoff',
    GIT_COMMITTER_EMAIL: 'session-handoff@localhost',
  };
  return date === undefined ? identity : { ...identity, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
}
