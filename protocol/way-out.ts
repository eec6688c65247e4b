import type { WayOut } from '../schemas/way-out.schema.js';

// No run-time imports: the dashboard page loads this module itself (daemon/http/dashboard/routes.ts),
// so the card and the CLI say the same; the age words (protocol/time-words.ts) come in as `age`.

/** Before any rehearsal: nothing was tried, so nothing is claimed. */
export const UNKNOWN_WAY_OUT: WayOut = {
  state: 'unknown',
  checked_at: null,
  cause: 'not rehearsed yet (PREPARE rehearses the evacuation; `handoff doctor` does it now)',
  fix: null,
  remote: null,
  proven: [],
};

export interface WayOutView {
  readonly nowMs: number;
  readonly evacuatePercent: number;
  /** "3 min ago" (protocol/time-words.ts formatAge). */
  readonly age: (seconds: number) => string;
}

/**
 * The one sentence every view prints about the way out (`handoff status`, the dashboard card,
 * `handoff doctor`): "way out: proven 3 min ago (origin, …)" or "way out: BLOCKED — <cause>; fix
 * before 90 %". `'short'` is the agent's status line: a few words, and nothing while it is unknown.
 */
export function wayOutSentence(wayOut: WayOut, view: WayOutView): string;
export function wayOutSentence(wayOut: WayOut, view: 'short'): string | null;
export function wayOutSentence(wayOut: WayOut, view: WayOutView | 'short'): string | null {
  if (view === 'short') return wayOut.state === 'unknown' ? null : wayOut.state === 'proven' ? 'way out proven' : 'way out BLOCKED (handoff status)';
  const age = wayOut.checked_at === null ? '' : ` ${view.age((view.nowMs - Date.parse(wayOut.checked_at)) / 1000)}`;
  if (wayOut.state === 'proven') {
    const where = [wayOut.remote ?? 'no remote: a local ref, this machine only', ...wayOut.proven];
    return `way out: proven${age} (${where.join(', ')})`;
  }
  if (wayOut.state === 'blocked') {
    const fix = wayOut.fix === null ? '' : ` — ${wayOut.fix}`;
    return `way out: BLOCKED — ${wayOut.cause ?? 'the rehearsal failed'}; fix before ${view.evacuatePercent} %${fix}`;
  }
  return `way out: unknown${age === '' ? '' : ` (checked${age})`} — ${wayOut.cause ?? 'not rehearsed yet'}`;
}

/** Where the rehearsal failed, as daemon/rehearsal/ found it. */
export interface WayOutFailure {
  /** The remote's name, as the drain would choose it. */
  readonly remote: string;
  /** What did not work: listing the remote, the dry run of the drain's refspecs, or the probe ref the server's hooks judge. */
  readonly step: 'url' | 'answer' | 'dry_run' | 'policy' | 'probe_cleanup' | 'lfs' | 'lfs_endpoint';
  /** How git failed (daemon/git/publish.ts pushFailure). */
  readonly kind: 'not_run' | 'timed_out' | 'credentials' | 'rejected' | 'failed' | 'unreachable';
  /** ssh, http(s) or a local path: where credentials would come from. */
  readonly transport: 'ssh' | 'http' | 'local';
  /** Whether the daemon's own environment has an SSH agent (SSH_AUTH_SOCK). */
  readonly sshAgent: boolean;
  /** The remote's or git's last words, credentials stripped. */
  readonly words: string;
  readonly timeoutSeconds: number;
  /** The probe ref left on the remote (probe_cleanup only). */
  readonly probeRef?: string;
  /** The Git LFS endpoint asked (lfs_endpoint only), credentials stripped. */
  readonly endpoint?: string;
}

const DOC = 'docs/troubleshooting.md#the-way-out-is-blocked';

function credentialWords(failure: WayOutFailure): { cause: string; fix: string } {
  const { remote } = failure;
  if (failure.transport === 'ssh' && !failure.sshAgent) {
    return {
      cause: `${remote} asks for credentials in the daemon's environment: the daemon has no SSH agent (SSH_AUTH_SOCK is unset, as in a service started at login)`,
      fix: `give the daemon's service an SSH agent or a key without a passphrase; see ${DOC}`,
    };
  }
  if (failure.transport === 'ssh') {
    return {
      cause: `${remote} refuses the SSH keys the daemon's agent offers: ${failure.words}`,
      fix: `add a key to the agent the daemon uses that the server accepts; see ${DOC}`,
    };
  }
  return {
    cause: `${remote} asks for credentials in the daemon's environment and the daemon never prompts: no credential helper answered`,
    fix: `configure a credential helper that needs no terminal (a stored token) for the daemon's user; see ${DOC}`,
  };
}

/** The LFS endpoint the drain uploads to did not answer a download probe. */
function lfsEndpointWords(failure: WayOutFailure): { cause: string; fix: string } {
  const { remote, words } = failure;
  const endpoint = failure.endpoint ?? `${remote}'s LFS endpoint`;
  const where = `the repository uses Git LFS and ${remote}'s LFS endpoint (${endpoint})`;
  if (failure.kind === 'credentials') {
    return {
      cause: `${where} asks for credentials the daemon's environment cannot give (it never prompts): ${words}`,
      fix: `configure a credential helper that needs no terminal for that endpoint, for the daemon's user; see ${DOC}`,
    };
  }
  if (failure.kind === 'rejected') {
    return {
      cause: `${where} does not serve the Git LFS API: ${words}`,
      fix: `enable Git LFS for the repository on the server (the daemon uploads only to the endpoint git-lfs derives from the remote's URL, never to one .lfsconfig names); see ${DOC}`,
    };
  }
  if (failure.kind === 'timed_out') {
    return {
      cause: `${where} did not answer within ${failure.timeoutSeconds} s`,
      fix: `check the network or the LFS server, or raise git_timeout_seconds; see ${DOC}`,
    };
  }
  return { cause: `${where} does not answer: ${words}`, fix: `check the LFS server and the network from the daemon's environment; see ${DOC}` };
}

/** The cause and the fix of a blocked way out: what failed, in the user's terms, and what makes it pass. */
export function blockedWayOut(failure: WayOutFailure): { cause: string; fix: string } {
  const { remote, words } = failure;
  if (failure.step === 'url') return { cause: `${remote} has no URL to push to: ${words}`, fix: `set one with \`git remote set-url ${remote} URL\`` };
  if (failure.step === 'probe_cleanup') {
    return {
      cause: `${remote} took the rehearsal's probe ref ${failure.probeRef ?? ''} but refused to delete it: ${words}`,
      fix: `delete it on the server (\`git push ${remote} :${failure.probeRef ?? ''}\`); the server must let the daemon delete what it pushed under refs/handoff/ (see ${DOC})`,
    };
  }
  if (failure.step === 'lfs') {
    return {
      cause: `the repository uses Git LFS and git-lfs does not run in the daemon's environment (${words}), so the content of its LFS files could not reach ${remote}`,
      fix: `install git-lfs where the daemon finds it (Debian/Ubuntu: apt-get install git-lfs); see ${DOC}`,
    };
  }
  if (failure.step === 'lfs_endpoint') return lfsEndpointWords(failure);
  if (failure.kind === 'credentials') return credentialWords(failure);
  if (failure.kind === 'timed_out')
    return {
      cause: `${remote} did not answer within ${failure.timeoutSeconds} s`,
      fix: `check the network or the server, or raise git_timeout_seconds; see ${DOC}`,
    };
  if (failure.kind === 'not_run') return { cause: `git could not run: ${words}`, fix: `see ${DOC}` };
  if (failure.step === 'policy') {
    return {
      cause: `${remote}'s server policy refuses refs under refs/handoff/ (its hooks rejected the probe: ${words})`,
      fix: `allow pushes to refs/heads/handoff/* and refs/handoff/* on the server, or make another remote the branch's upstream; see ${DOC}`,
    };
  }
  if (failure.kind === 'rejected' || failure.kind === 'failed') {
    return {
      cause: `${remote} refuses the refs the evacuation would push (dry run): ${words}`,
      fix: `allow pushes to refs/heads/handoff/* and refs/handoff/* for the daemon's user; see ${DOC}`,
    };
  }
  return { cause: `${remote} does not answer: ${words}`, fix: `check the remote's URL and the network from the daemon's environment; see ${DOC}` };
}
