import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { HandoffError } from '../../protocol/index.js';
import type { Withheld } from '../../schemas/index.js';
import { currentRef, git } from '../git/index.js';
import { readAllowList } from './secret-allow.js';

/** One finding of a scanner: the rule that matched and where; never the matched text. */
export interface SecretHit {
  readonly rule: string;
  readonly id: string;
  readonly line: number;
}

/** Scans one file's text; the daemon uses secretlint, tests may pass one that fails. */
export type SecretScanner = (path: string, content: string) => Promise<readonly SecretHit[]>;

const SECRETLINT_CONFIG = { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended }] };

/** secretlint's core with its maintained recommended preset (cloud keys, tokens, private keys, …). */
export const secretlintScanner: SecretScanner = async (path, content) => {
  // secretlint's core marks every lint in a shared profiler that keeps each mark (as does Node's
  // performance timeline) for ever and searches them all at the next one: in a daemon that scans at
  // every drain, unbounded memory and a slower scan each time (0.5 s → 3.3 s for the same 250 files
  // over six scans). The daemon reads no profile, so marking is switched off.
  secretLintProfiler.mark = () => undefined;
  const result = await lintSource({
    source: { content, filePath: path, contentType: 'text' },
    // Masked: a message never carries the secret, even into a log.
    options: { config: SECRETLINT_CONFIG, maskSecrets: true },
  });
  return result.messages.map((message) => ({ rule: message.ruleId, id: message.messageId, line: message.loc.start.line }));
};

export interface SecretScanOptions {
  /** Wall-clock budget for the whole scan; past it the drain blocks rather than push unscanned files. */
  readonly timeoutMs: number;
  /** Larger files are not scanned (and said so in the journal); a secret file is small. */
  readonly maxFileBytes: number;
  readonly now: () => number;
  readonly scanner?: SecretScanner;
  /** Told after each file, so a long scan can say how far it got (files done of the changed files). */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface SecretScan {
  /** Files kept off the snapshot: untracked ones left out, tracked ones at their committed content. */
  readonly withheld: readonly Withheld[];
  /** Files with a finding that `.session-handoff/allow-secrets` names: pushed on purpose. */
  readonly allowed: readonly string[];
  /**
   * Files not scanned: binary (a NUL in the first 8000 bytes, git's own test) or too large, which the
   * snapshot takes as they are; unreadable, which git cannot add either (it names them as refused).
   */
  readonly unscanned: readonly { readonly path: string; readonly why: Unscanned }[];
  readonly scanned: number;
}

const GIT_TIMEOUT_MS = 120_000;
/** git calls a file binary when its first 8000 bytes hold a NUL; the scan agrees with it. */
const BINARY_PROBE_BYTES = 8000;

const split = (output: string): string[] => output.split('\0').filter(Boolean);

/**
 * What the snapshot would add or change: tracked files that differ from HEAD (staged or not) and
 * untracked files that are not ignored. Ignored files never reach the snapshot, so they are not read.
 */
export async function changedPaths(root: string): Promise<string[]> {
  const options = { cwd: root, timeoutMs: GIT_TIMEOUT_MS };
  const head = await currentRef(root, 'HEAD');
  const tracked =
    head === null
      ? await git(['ls-files', '-z', '--cached'], options)
      : await git(['diff', '--name-only', '-z', '--no-renames', '--ignore-submodules=all', '--end-of-options', head, '--'], options);
  const untracked = await git(['ls-files', '-z', '--others', '--exclude-standard'], options);
  return [...new Set([...split(tracked), ...split(untracked)])].sort();
}

type Unscanned = 'binary' | 'too_large' | 'unreadable';
type Read = { kind: 'text'; content: string } | { kind: 'skip' } | { kind: 'unscanned'; why: Unscanned };

/** A regular file's text, read without following a link; links and directories go in as what they are. */
async function readCandidate(root: string, path: string, maxBytes: number): Promise<Read> {
  const full = join(root, path);
  const stats = await lstat(full).catch((error: NodeJS.ErrnoException) => {
    // Deleted since HEAD: the snapshot records the deletion, there is nothing to scan.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (stats === null || !stats.isFile()) return { kind: 'skip' };
  if (stats.size > maxBytes) return { kind: 'unscanned', why: 'too_large' };
  // No link followed, and a FIFO swapped in after the lstat cannot make the open wait for a writer.
  const handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EACCES' || error.code === 'EPERM') return null;
    throw error;
  });
  if (handle === null) return { kind: 'unscanned', why: 'unreadable' };
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return { kind: 'skip' };
    if (opened.size > maxBytes) return { kind: 'unscanned', why: 'too_large' };
    const bytes = await handle.readFile();
    if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) return { kind: 'unscanned', why: 'binary' };
    return { kind: 'text', content: bytes.toString('utf8') };
  } finally {
    await handle.close();
  }
}

function reasonOf(hits: readonly SecretHit[]): string {
  const first = hits[0];
  const more = hits.length > 1 ? ` (+${hits.length - 1} more)` : '';
  return `secretlint: ${first?.id ?? 'finding'} on line ${first?.line ?? 0}${more}`;
}

/**
 * Scans every file the snapshot would push and says which to withhold. A scanner that throws or a
 * scan past its budget is a blocked drain: nothing unscanned is ever pushed.
 */
export async function scanForSecrets(root: string, options: SecretScanOptions): Promise<SecretScan> {
  const scanner = options.scanner ?? secretlintScanner;
  const deadline = options.now() + options.timeoutMs;
  const paths = await changedPaths(root);
  const allowList = await readAllowList(root);
  const withheld: Withheld[] = [];
  const allowed: string[] = [];
  const unscanned: { path: string; why: Unscanned }[] = [];
  let scanned = 0;
  for (const [index, path] of paths.entries()) {
    options.onProgress?.(index, paths.length);
    if (options.now() > deadline) {
      throw new HandoffError(
        'drain_blocked',
        `the secret scan did not finish within ${options.timeoutMs} ms (${scanned} of ${paths.length} files scanned), so nothing was pushed; raise secret_scan.timeout_ms in config.json, then run \`handoff resume\``,
        'raise secret_scan.timeout_ms in config.json, then run `handoff resume`',
      );
    }
    const read = await readCandidate(root, path, options.maxFileBytes);
    if (read.kind === 'skip') continue;
    if (read.kind === 'unscanned') {
      unscanned.push({ path, why: read.why });
      continue;
    }
    let hits: readonly SecretHit[];
    try {
      hits = await scanner(path, read.content);
    } catch (error) {
      throw new HandoffError(
        'drain_blocked',
        `the secret scan failed on a file (${(error as Error).message}), so nothing was pushed; run \`handoff resume\` once the scanner works`,
        'run `handoff resume` once the scanner works',
      );
    }
    scanned++;
    if (hits.length === 0) continue;
    if (allowList.has(path)) allowed.push(path);
    else withheld.push({ path, rule: hits[0]?.rule ?? 'unknown', reason: reasonOf(hits) });
  }
  return { withheld, allowed, unscanned, scanned };
}
