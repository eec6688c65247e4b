import type { Manifest } from '../schemas/index.js';
import type { Code } from './codes.js';

export type CheckStatus = 'ok' | 'failed' | 'warning';

/** One verification check, with what it compared, so an agent can act on the result. */
export interface Check {
  readonly name: 'integrity' | 'identity' | 'commit' | 'work_tree' | 'instructions' | 'recency' | 'lease';
  readonly status: CheckStatus;
  readonly expected: unknown;
  readonly observed: unknown;
  readonly detail: string;
}

/** What the daemon observed in the receiver's checkout; the manifest says what should be there. */
export interface ReceiverObservation {
  readonly root_commit: string | null;
  readonly remote_urls: readonly string[];
  readonly commit_present: boolean;
  /** How the commit got there: already present, or fetched from the remote just now. */
  readonly commit_source: 'present' | 'fetched' | 'missing';
  readonly head: string | null;
  readonly tree: string;
  /** `git diff --name-status` between the receiver's work tree and the checkpoint, when they differ. */
  readonly differences: readonly string[];
  /**
   * Whether the accept moves the work tree: `would_move` when nothing can be lost (a clean tree to the
   * checkpoint, a primary's tree still as frozen to the returned one), `refused_dirty` when something would;
   * `not_requested`: the checkpoint is not here to move to.
   */
  readonly checkout: 'not_requested' | 'not_needed' | 'refused_dirty' | 'refused_git' | 'would_move';
  /** Why git would refuse the move (`refused_git`), in git's words: found before the lease moves. */
  readonly checkout_blocker?: string | null;
  readonly instructions: readonly { readonly path: string; readonly sha256: string }[];
}

export interface TakeoverJudgement {
  readonly code: Extract<Code, 'verified' | 'diverged' | 'stale'>;
  readonly checks: readonly Check[];
}

const check = (name: Check['name'], status: CheckStatus, expected: unknown, observed: unknown, detail: string): Check => ({
  name,
  status,
  expected,
  observed,
  detail,
});

function instructionChanges(manifest: Manifest, observed: ReceiverObservation['instructions']): string[] {
  const before = new Map(manifest.repository.instructions.map((i) => [i.path, i.sha256]));
  const after = new Map(observed.map((i) => [i.path, i.sha256]));
  const changes: string[] = [];
  for (const [path, sha] of before) {
    if (!after.has(path)) changes.push(`${path} was removed`);
    else if (after.get(path) !== sha) changes.push(`${path} changed`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`${path} is new`);
  return changes;
}

/**
 * Compares the receiver's real state with the manifest, check by check, in CONTRACT order after
 * integrity. Real state wins: any difference in identity, commit or work tree is `diverged`.
 */
export function judgeTakeover(manifest: Manifest, receiver: ReceiverObservation, nowMs: number, maxAgeHours: number): TakeoverJudgement {
  const { repository, checkpoint } = manifest;
  const checks: Check[] = [
    check('integrity', 'ok', 'sha256 recorded in the journal', 'bytes on disk match', 'manifest and HANDOFF.md match their recorded sha256'),
  ];

  const sameRoot = repository.root_commit === null || receiver.root_commit === repository.root_commit;
  const remoteKnown = repository.remote_url === null || receiver.remote_urls.includes(repository.remote_url);
  checks.push(
    check(
      'identity',
      !sameRoot ? 'failed' : remoteKnown ? 'ok' : 'warning',
      { root_commit: repository.root_commit, remote_url: repository.remote_url },
      { root_commit: receiver.root_commit, remote_urls: receiver.remote_urls },
      !sameRoot
        ? 'this checkout is another repository (its root commit differs)'
        : remoteKnown
          ? 'same repository'
          : 'same history, but no remote of this checkout has the recorded URL',
    ),
  );

  checks.push(
    check(
      'commit',
      receiver.commit_present ? 'ok' : 'failed',
      checkpoint.commit,
      receiver.commit_source,
      receiver.commit_present
        ? `checkpoint commit is ${receiver.commit_source}`
        : `checkpoint ${checkpoint.commit ?? '(none)'} is not in this checkout and could not be fetched from ${checkpoint.ref ?? 'the remote'}`,
    ),
  );

  const treeMatches = receiver.tree === checkpoint.tree;
  let workTree: Check;
  if (treeMatches) {
    workTree = check('work_tree', 'ok', checkpoint.tree, receiver.tree, 'the work tree equals the checkpoint');
  } else if (receiver.checkout === 'would_move') {
    workTree = check(
      'work_tree',
      'warning',
      checkpoint.tree,
      receiver.tree,
      manifest.leg === 'return'
        ? 'the work tree is still as frozen at the out leg: the accept brings the returned work into it (nothing can be lost)'
        : `the work tree is clean: the accept checks the checkpoint out on the local branch handoff/${manifest.cycle_id} (nothing can be lost)`,
    );
  } else {
    const why =
      receiver.checkout === 'refused_dirty'
        ? manifest.leg === 'return'
          ? 'the work tree changed since it was frozen at the out leg: bringing the returned work in would overwrite that'
          : 'the work tree has changes of its own: moving it to the checkpoint would lose them'
        : receiver.checkout === 'refused_git'
          ? `git cannot move the work tree (${receiver.checkout_blocker ?? 'unknown cause'}), found before the lease moved`
          : 'the work tree differs from the checkpoint';
    workTree = check('work_tree', 'failed', checkpoint.tree, { tree: receiver.tree, head: receiver.head, differences: receiver.differences }, why);
  }
  checks.push(workTree);

  const changes = instructionChanges(manifest, receiver.instructions);
  checks.push(
    check(
      'instructions',
      changes.length === 0 ? 'ok' : 'warning',
      repository.instructions,
      receiver.instructions,
      changes.length === 0 ? 'instruction files unchanged' : `INSTRUCTION FILES CHANGED SINCE THE HANDOFF: ${changes.join('; ')} — read them before acting`,
    ),
  );

  const ageHours = (nowMs - Date.parse(manifest.created_at)) / 3_600_000;
  const fresh = ageHours <= maxAgeHours;
  checks.push(
    check(
      'recency',
      fresh ? 'ok' : 'failed',
      `at most ${maxAgeHours} h old`,
      `${ageHours.toFixed(1)} h old`,
      fresh ? 'recent enough' : 'the manifest is stale; the source may have moved on',
    ),
  );

  const diverged = checks.some((c) => c.status === 'failed' && c.name !== 'recency');
  return { code: diverged ? 'diverged' : fresh ? 'verified' : 'stale', checks };
}
