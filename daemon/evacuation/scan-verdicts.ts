import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SECRET_VERDICTS_MAX, SecretVerdictsSchema, type SecretVerdict, type SecretVerdicts } from '../../schemas/index.js';
import { precompiled } from '../precompiled.js';
import { writeFileAtomic } from '../store/index.js';

/** A larger file is not ours to trust (20,000 verdicts take about 1.6 MB): it is ignored, and the scan runs as if there were none. */
const MAX_FILE_BYTES = 4 << 20;

const validate = precompiled<SecretVerdicts>(SecretVerdictsSchema);

export const verdictsFile = (stateDir: string): string => join(stateDir, 'cache', 'secret-verdicts.json');

/**
 * The key of one verdict: everything the scanner's answer depends on. The scanner's fingerprint (an
 * upgrade or a changed rule scans again), what was read (a link's target or a file's bytes), the path
 * (secretlint rules may judge by the file name) and the bytes themselves. SHA-256 over the bytes, not
 * git's SHA-1 blob id: SHA-1 collisions can be made, and a crafted file must not inherit a clean verdict.
 */
export function verdictKey(fingerprint: string, kind: 'file' | 'link', path: string, bytes: Uint8Array): string {
  const hash = createHash('sha256');
  // Length-prefixed, so no choice of path can make two different inputs one key.
  for (const part of [fingerprint, kind, path]) hash.update(`${Buffer.byteLength(part)}:${part}\n`);
  return hash.update(bytes).digest('hex');
}

export interface VerdictCache {
  readonly fingerprint: string;
  /** The verdict for this key (null: clean), or undefined when it was never scanned. */
  get(key: string): SecretVerdict | undefined;
  set(key: string, verdict: SecretVerdict): void;
  /** Writes the verdicts back when they changed; a failed write costs only a scan next time. */
  save(): Promise<void>;
}

async function readVerdicts(path: string): Promise<SecretVerdicts['entries']> {
  let handle;
  try {
    // The state dir is the daemon's (0700); a link or a FIFO here is still not followed or waited on.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_FILE_BYTES) return [];
    const parsed: unknown = JSON.parse(await handle.readFile('utf8'));
    return validate(parsed) ? parsed.entries : [];
  } catch {
    // Cut short or not JSON: ignored whole, never trusted in part.
    return [];
  } finally {
    await handle.close();
  }
}

/**
 * The secret scan's verdicts from earlier drains (`<state dir>/cache/secret-verdicts.json`), for one
 * scan: opened before it and saved after it, so the idle daemon keeps none of them in memory. The
 * least recently used go first past SECRET_VERDICTS_MAX. Two scans at once (two workspaces) each save
 * their own view; the verdicts one of them loses are scanned again when next met, never wrong.
 */
export async function openVerdictCache(stateDir: string, fingerprint: string): Promise<VerdictCache> {
  const path = verdictsFile(stateDir);
  const verdicts = new Map(await readVerdicts(path));
  let changed = false;
  return {
    fingerprint,
    get(key) {
      const verdict = verdicts.get(key);
      if (verdict === undefined) return undefined;
      // Most recently used last: the order is the eviction order.
      verdicts.delete(key);
      verdicts.set(key, verdict);
      changed = true;
      return verdict;
    },
    set(key, verdict) {
      verdicts.delete(key);
      verdicts.set(key, verdict);
      for (const oldest of verdicts.keys()) {
        if (verdicts.size <= SECRET_VERDICTS_MAX) break;
        verdicts.delete(oldest);
      }
      changed = true;
    },
    async save() {
      if (!changed) return;
      const text = JSON.stringify({ version: 1, entries: [...verdicts] } satisfies SecretVerdicts);
      try {
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await writeFileAtomic(path, text, 0o600);
        changed = false;
      } catch {
        // Only an optimisation is lost: every file is scanned again next time.
      }
    },
  };
}
