import type { Cycle, DrainProgress, RemoteLeaseRecord } from '../../protocol/index.js';
import type { Manifest } from '../../schemas/index.js';

/**
 * A drain that ran on another machine, as this machine knows it: finished, with the package and
 * the checkpoint its manifest names. Enough for verify/accept and for chaining the next leg.
 */
export function importedDrain(manifest: Manifest, manifestPath: string, manifestSha: string): DrainProgress {
  const at = manifest.created_at;
  const done = (summary: Record<string, string | number | boolean | null>, sha256: string | null = null) => ({ at, sha256, summary });
  return {
    leg: manifest.leg,
    started_at: at,
    no_wait: true,
    drained_at: null,
    waited: { at, why: 'no_wait' },
    revision: manifest.revision,
    steps: {
      snapshot: done({ ref: manifest.checkpoint.ref, commit: manifest.checkpoint.commit, tree: manifest.checkpoint.tree, parent: null }),
      publish: done({
        mechanism: manifest.checkpoint.mechanism,
        ref: manifest.checkpoint.ref,
        commit: manifest.checkpoint.commit,
        remote: manifest.checkpoint.remote,
        remote_verified: manifest.checkpoint.remote_verified,
        pushed: false,
      }),
      package: done(
        {
          manifest: manifestPath,
          handoff: manifest.integrity.artifacts[0]?.path ?? null,
          capsule: manifest.capsule_source,
          mechanism: manifest.checkpoint.mechanism,
          ref: manifest.checkpoint.ref,
          commit: manifest.checkpoint.commit,
          remote: manifest.checkpoint.remote,
        },
        manifestSha,
      ),
    },
    manifests: [manifestSha],
    revision_at: at,
    previous_commit: null,
  };
}

/** The cycle a receiver on another machine takes over, rebuilt from the travelling manifest and lease. */
export function importedCycle(manifest: Manifest, record: RemoteLeaseRecord, remote: string, leaseHead: string): Cycle {
  return {
    id: manifest.cycle_id,
    started_at: manifest.created_at,
    trigger: { kind: manifest.trigger.kind, reason: manifest.trigger.reason, readings: manifest.trigger.readings.map((r) => ({ ...r, executor: null })) },
    profile: manifest.profile,
    checkpoint: { mechanism: manifest.checkpoint.mechanism, ref: manifest.checkpoint.ref, commit: manifest.checkpoint.commit, verified: true },
    return_checkpoint: null,
    drain: importedDrain(manifest, record.manifest.path, record.manifest.sha256),
    receiver: null,
    return_drain: null,
    remote: { name: remote, lease_head: leaseHead },
  };
}
