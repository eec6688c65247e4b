import type { Config } from '../../schemas/index.js';
import { openVerdictCache } from '../evacuation/scan-verdicts.js';

export interface ScanAhead {
  /** Files the drain would push whose contents were judged: read by the scanner now, or known from the cache. */
  readonly judged: number;
  /** Files the drain would withhold as things stand (a secret found): the person hears it at PREPARE. */
  readonly withheld: number;
}

/**
 * The secret scan of the files an evacuation would push, run at PREPARE into the scan-verdict cache
 * the drain opens: the drain then scans only what changed since (a file's verdict is keyed by its
 * path and bytes, so an edit after this is scanned again, as strictly as ever). Null when it stopped
 * early (a drain began, or past its budget): the verdicts found so far are kept all the same.
 */
export async function scanAhead(
  root: string,
  options: { readonly stateDir: string; readonly config: Pick<Config, 'secret_scan'>; readonly now: () => number; readonly stillWanted: () => boolean },
): Promise<ScanAhead | null> {
  // Loaded here, as the drain loads it: secretlint is the largest part of the daemon an idle one never runs.
  const { scanForSecrets, secretlintFingerprint } = await import('../evacuation/secret-scan.js');
  const verdicts = await openVerdictCache(options.stateDir, secretlintFingerprint());
  try {
    const scan = await scanForSecrets(root, {
      timeoutMs: options.config.secret_scan.timeout_ms,
      maxFileBytes: options.config.secret_scan.max_file_bytes,
      // The scan has no cancel; a clock past its budget is how it stops at once for a drain that began.
      now: () => (options.stillWanted() ? options.now() : Number.POSITIVE_INFINITY),
      verdicts,
    });
    return { judged: scan.scanned + (scan.cached ?? 0), withheld: scan.withheld.length };
  } catch {
    // Past its budget or stopped for a drain: only a head start is lost; the drain scans the rest itself.
    return null;
  } finally {
    await verdicts.save();
  }
}
