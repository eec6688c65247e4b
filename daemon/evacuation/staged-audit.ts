import { redactHits } from '../../protocol/index.js';
import type { Unscanned, Withheld } from '../../schemas/index.js';
import { readBlobBytes, type StagedEntry } from '../git/index.js';
import { readAllowList } from './secret-allow.js';
import {
  decodeText,
  newDisableComment,
  reasonOf,
  scanFailed,
  scanTexts,
  secretlintScanner,
  verdictOf,
  type SecretScan,
  type SecretScanner,
} from './secret-scan.js';

/** A gitlink names a commit of another repository: no bytes of this one to scan. */
const GITLINK = '160000';

export interface AuditOptions {
  readonly head: string | null;
  readonly maxFileBytes: number;
  /** The blob ids of the bytes the first scan read and let through (SecretScanOptions.seen). */
  readonly seen: ReadonlyMap<string, readonly string[]>;
  readonly scanner?: SecretScanner;
}

/**
 * The staged entries whose blob is not one the first scan saw (a file changed or appeared after it,
 * or a clean filter rewrote it), scanned from the bytes git stored — the bytes that would be pushed —
 * exactly as the first scan would: name, content, a new `secretlint-disable` comment, the allow list.
 * Returns the scan with what it found added; the new withheld paths are the ones to keep off the tree.
 * An unchanged tree costs nothing here (no git process).
 */
export async function auditStaged(root: string, entries: readonly StagedEntry[], scan: SecretScan, options: AuditOptions): Promise<SecretScan> {
  const kept = new Set(scan.withhold);
  const late = entries.filter((entry) => entry.mode !== GITLINK && !kept.has(entry.path) && !(options.seen.get(entry.path) ?? []).includes(entry.blob));
  if (late.length === 0) return scan;
  const scanner = options.scanner ?? secretlintScanner;
  const [blobs, allowList] = await Promise.all([
    readBlobBytes(
      root,
      late.map((entry) => entry.blob),
      options.maxFileBytes,
    ),
    readAllowList(root),
  ]);
  const names = await scanTexts(
    late.map((entry) => entry.path),
    scanner,
  ).catch((error: unknown) => {
    throw scanFailed(error, 'the file names');
  });
  const withheld: Withheld[] = [...scan.withheld];
  const withhold: string[] = [...scan.withhold];
  const allowed = new Set(scan.allowed);
  const unscanned = new Map<string, Unscanned>(scan.unscanned.map((file) => [file.path, file.why]));
  let scanned = scan.scanned;
  for (const [index, entry] of late.entries()) {
    const { path } = entry;
    const inName = names[index] ?? [];
    const first = inName[0];
    if (first !== undefined) {
      withheld.push({ path: redactHits(path, inName), rule: first.rule, reason: `secretlint: ${first.id} in the file name` });
      withhold.push(path);
      continue;
    }
    const blob = blobs.get(entry.blob);
    if (blob === undefined || !blob.ok) {
      unscanned.set(path, blob?.why === 'too_large' ? 'too_large' : 'unreadable');
      continue;
    }
    const content = decodeText(blob.bytes);
    if (content === null) {
      unscanned.set(path, 'binary');
      continue;
    }
    let verdict;
    try {
      verdict = verdictOf(await scanner(path, content));
    } catch (error) {
      throw scanFailed(error, 'a file');
    }
    scanned++;
    unscanned.delete(path);
    const disabled = await newDisableComment(root, options.head, path, content);
    if (verdict === null && disabled === null) continue;
    if (allowList.paths.has(path)) {
      allowed.add(path);
      continue;
    }
    allowed.delete(path);
    withheld.push(
      verdict !== null
        ? { path, rule: verdict.rule, reason: reasonOf(verdict) }
        : {
            path,
            rule: '@secretlint/secretlint-rule-filter-comments',
            reason: `secretlint: a secretlint-disable comment on line ${disabled ?? 0} that HEAD's version of the file does not have`,
          },
    );
    withhold.push(path);
  }
  return {
    ...scan,
    withheld,
    withhold,
    allowed: [...allowed],
    unscanned: [...unscanned].filter(([path]) => !withhold.includes(path)).map(([path, why]) => ({ path, why })),
    scanned,
  };
}
