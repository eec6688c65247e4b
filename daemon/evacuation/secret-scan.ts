import { constants } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as pattern } from '@secretlint/secretlint-rule-pattern';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
// Imported, not read from node_modules at run time: the bundle holds the code that runs, and the
// versions a verdict is keyed by must be that code's.
import corePackage from '@secretlint/core/package.json' with { type: 'json' };
import patternPackage from '@secretlint/secretlint-rule-pattern/package.json' with { type: 'json' };
import recommendedPackage from '@secretlint/secretlint-rule-preset-recommend/package.json' with { type: 'json' };
import { HandoffError, redactHits } from '../../protocol/index.js';
import type { AllowListSource, SecretVerdict, Unscanned, Withheld } from '../../schemas/index.js';
import { blobIds, currentRef, git, OWN_FILES_EXCLUDE, runGit } from '../git/index.js';
import { readAllowList } from './secret-allow.js';
import { verdictKey, type VerdictCache } from './scan-verdicts.js';

/** One finding of a scanner: the rule that matched, where, and its offsets; never the matched text. */
export interface SecretHit {
  readonly rule: string;
  readonly id: string;
  readonly line: number;
  /** Offsets into the scanned text, end exclusive: what a record replaces with its marker. */
  readonly start: number;
  readonly end: number;
}

/** Scans one file's text; the daemon uses secretlint, tests may pass one that fails. */
export type SecretScanner = (path: string, content: string) => Promise<readonly SecretHit[]>;

const PATTERN_RULE = '@secretlint/secretlint-rule-pattern';
const NPMRC_TOKEN = 'Npmrc_authToken';

const lineEnd = (content: string, from: number): number => {
  const newline = content.indexOf('\n', from);
  return newline === -1 ? content.length : newline;
};

/**
 * Credential shapes the recommended preset does not know, given to secretlint's maintained pattern
 * rule (no npm rule package covers them): a kubeconfig's bearer tokens and embedded client key, and a
 * `.netrc` entry's password. Matched by content, so they hold in any file name and in a record; a
 * value that is already a record's marker is not a finding again.
 */
export const EXTRA_PATTERNS = [
  { name: 'kubeconfig client key', patterns: [String.raw`/(?<=client-key-data:[ \t]*["']?)[A-Za-z0-9+\/=]{16,}/`] },
  {
    name: 'kubeconfig token',
    patterns: [String.raw`/(?<=^[ \t-]*(?:token|id-token|refresh-token|access-token):[ \t]*["']?)[A-Za-z0-9._~+\/=-]{16,}/m`],
  },
  {
    name: 'netrc password',
    patterns: [
      String.raw`/(?<=(?:\bmachine[ \t\r\n]+\S+|^[ \t]*default)(?:[ \t\r\n]+(?:login|account|port)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+)(?!\[withheld: )\S+/m`,
    ],
  },
];

const SECRETLINT_CONFIG = {
  rules: [
    { id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended },
    { id: PATTERN_RULE, rule: pattern, options: { patterns: EXTRA_PATTERNS } },
  ],
};

/** Raised when what this file does with a text changes in a way the fingerprint below cannot see. */
const SCAN_LOGIC_VERSION = 2;

/**
 * What the verdicts of secretlintScanner depend on besides the text and its path: the versions of
 * secretlint and its rules, the rule configuration, and V8 (whose regular expressions run the rules).
 * A cached verdict is keyed by it (daemon/evacuation/scan-verdicts.ts), so an upgrade scans again.
 */
export function secretlintFingerprint(): string {
  const versions = [corePackage, recommendedPackage, patternPackage].map(({ name, version }) => `${name}@${version}`);
  return JSON.stringify({ logic: SCAN_LOGIC_VERSION, versions, v8: process.versions.v8, patterns: EXTRA_PATTERNS, mask: true });
}

/** The regular expressions of the patterns above, as the pattern rule reads its `/source/flags` strings. */
const PATTERN_TESTS = EXTRA_PATTERNS.map(({ name, patterns }) => ({
  name,
  tests: patterns.map((text) => {
    const slash = text.lastIndexOf('/');
    return new RegExp(text.slice(1, slash), `${text.slice(slash + 1)}g`);
  }),
}));

/**
 * The pattern rule gives every pattern one message, and masking hides its name in it: the name is
 * found again as the pattern with a match at the hit's offset.
 */
const patternName = (content: string, start: number): string =>
  PATTERN_TESTS.find(({ tests }) => tests.some((test) => [...content.matchAll(test)].some((match) => match.index === start)))?.name ?? 'pattern';

/** secretlint's core with its maintained recommended preset (cloud keys, tokens, private keys, …) and the patterns above. */
export const secretlintScanner: SecretScanner = async (path, content) => {
  // secretlint's core marks every lint in a shared profiler that keeps each mark (as does Node's
  // performance timeline) for ever and searches them all at the next one: in a daemon that scans at
  // every drain, unbounded memory and a slower scan each time (0.5 s → 3.3 s for the same 250 files
  // over six scans). The daemon reads no profile, so marking is switched off.
  secretLintProfiler.mark = () => undefined;
  // Rules keyed on the extension (GCP's service-account `.json`) read it from `ext`, which secretlint
  // does not derive; `.p12` is left out: that rule reads the file at `filePath` from disk, not `content`.
  const ext = extname(path) === '.p12' ? '' : extname(path);
  const result = await lintSource({
    source: { content, filePath: path, ext, contentType: 'text' },
    // Masked: a message never carries the secret, even into a log.
    options: { config: SECRETLINT_CONFIG, maskSecrets: true },
  });
  return result.messages.map((message) => ({
    rule: message.ruleId,
    id: message.ruleId === PATTERN_RULE ? patternName(content, message.range[0]) : message.messageId,
    line: message.loc.start.line,
    start: message.range[0],
    // The npm rule's `_authToken=` range starts at the key but is only the token long: to the line's
    // end instead, so a record's marker leaves no tail of the token.
    end: message.messageId === NPMRC_TOKEN ? lineEnd(content, message.range[1]) : message.range[1],
  }));
};

/**
 * secretlint honours `secretlint-disable` comments, which whoever wrote a text could put in it. In a
 * text the daemon writes into a record they mean nothing: the scanner sees them with one character
 * changed (same length, so offsets hold).
 */
const inert = (text: string): string => text.replace(/secretlint-(?=disable|enable)/g, 'secretlint_');

/** Texts of a record joined so one secretlint call per file type scans them all; a hit is mapped back to each text it touches. */
const SEPARATOR = '\n\n';

/**
 * A record's text could be any file's, so it is scanned as each file type whose rules differ: the npm
 * rule looks for `_authToken=` only in a `.npmrc`, and for tokens in package files only in a
 * `package.json` (also GCP's `.json` service-account key); every other rule ignores the name.
 */
export const RECORD_AS: readonly string[] = ['.npmrc', 'package.json'];

/** The hits in each text, from one scanner call over all of them. */
export async function scanTexts(texts: readonly string[], scanner: SecretScanner = secretlintScanner): Promise<SecretHit[][]> {
  const found: SecretHit[][] = texts.map(() => []);
  if (texts.length === 0) return found;
  const starts: number[] = [];
  let offset = 0;
  for (const text of texts) {
    starts.push(offset);
    offset += text.length + SEPARATOR.length;
  }
  const joined = inert(texts.join(SEPARATOR));
  // A hit every file type finds is one hit.
  const hits = new Map((await Promise.all(RECORD_AS.map((name) => scanner(name, joined)))).flat().map((hit) => [`${hit.rule} ${hit.start} ${hit.end}`, hit]));
  for (const hit of hits.values()) {
    texts.forEach((text, index) => {
      const begin = starts[index] ?? 0;
      const start = Math.max(hit.start - begin, 0);
      const end = Math.min(hit.end - begin, text.length);
      if (start < end) found[index]?.push({ ...hit, start, end });
    });
  }
  return found;
}

export interface SecretScanOptions {
  /** Wall-clock budget for the whole scan; past it the drain blocks rather than push unscanned files. */
  readonly timeoutMs: number;
  /** Larger files are not scanned (and said so in the journal); a secret file is small. */
  readonly maxFileBytes: number;
  readonly now: () => number;
  readonly scanner?: SecretScanner;
  /** Told after each file, so a long scan can say how far it got (files done of the changed files). */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Verdicts of earlier scans by the same scanner (its fingerprint is in every key): a file whose
   * path and bytes were judged before is not scanned again. Without it every file is scanned.
   */
  readonly verdicts?: VerdictCache;
  /**
   * Filled with git's blob ids of the bytes read of each file the snapshot may take as they are
   * (clean, allowed or binary), so the staged entries can be proven to be those bytes. Never a
   * withheld file's: its content is not hashed.
   */
  readonly seen?: Map<string, readonly string[]>;
  /** HEAD's commit (null: unborn) when the caller already read it: the snapshot commits on the HEAD it scanned against. */
  readonly head?: string | null;
  /**
   * The paths to scan when the caller knows what changed (the files changed since a rehearsal's
   * package, whose verdicts it carries for the rest); otherwise every change against HEAD.
   */
  readonly paths?: readonly string[];
}

export interface SecretScan {
  /**
   * Files kept off the snapshot: untracked ones left out, tracked ones at their committed content.
   * A name that holds a secret is shown with the secret replaced by its marker.
   */
  readonly withheld: readonly Withheld[];
  /** The paths of those files as they are: what the snapshot excludes. */
  readonly withhold: readonly string[];
  /** Files with a finding that `.session-handoff/allow-secrets` names: pushed on purpose. */
  readonly allowed: readonly string[];
  /** Whether the allow list was read, absent, or ignored because the remote could have supplied it. */
  readonly allow_list: AllowListSource;
  /**
   * Files not scanned: binary (a NUL in the first 8000 bytes, git's own test) or too large, which the
   * snapshot takes as they are; unreadable, which git cannot add either (it names them as refused).
   */
  readonly unscanned: readonly { readonly path: string; readonly why: Unscanned }[];
  /** Files the scanner read this time. */
  readonly scanned: number;
  /** Files judged by the verdict an earlier scan gave the same path and bytes (absent before the cache existed). */
  readonly cached?: number;
}

const GIT_TIMEOUT_MS = 120_000;
/** git calls a file binary when its first 8000 bytes hold a NUL; the scan agrees with it, UTF-16 aside. */
const BINARY_PROBE_BYTES = 8000;

/** UTF-16 without a BOM: by position, each unit's high byte is often a NUL and its low byte never (mostly-ASCII text). */
function utf16Layout(probe: Buffer): 'le' | 'be' | null {
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i + 1 < probe.length; i += 2) {
    if (probe[i] === 0) evenZero++;
    if (probe[i + 1] === 0) oddZero++;
  }
  const units = Math.floor(probe.length / 2);
  if (evenZero === 0 && oddZero * 2 >= units) return 'le';
  if (oddZero === 0 && evenZero * 2 >= units) return 'be';
  return null;
}

const utf16 = (bytes: Buffer, layout: 'le' | 'be'): string => {
  const even = Buffer.from(bytes.subarray(0, bytes.length - (bytes.length % 2)));
  return (layout === 'be' ? even.swap16() : even).toString('utf16le');
};

/** UTF-32 (Buffer has no codec for it); null when a unit is no Unicode scalar value or the length is cut. */
function utf32(bytes: Buffer, layout: 'le' | 'be'): string | null {
  if (bytes.length % 4 !== 0) return null;
  const parts: string[] = [];
  // In slices: a spread of a whole file's code points would overflow the call stack.
  for (let at = 0; at < bytes.length; at += 4 * 4096) {
    const points: number[] = [];
    for (let i = at; i < Math.min(at + 4 * 4096, bytes.length); i += 4) {
      const point = layout === 'le' ? bytes.readUInt32LE(i) : bytes.readUInt32BE(i);
      if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return null;
      points.push(point);
    }
    parts.push(String.fromCodePoint(...points));
  }
  return parts.join('');
}

/**
 * A file's text as an editor would read it: by its BOM UTF-8 (the BOM dropped), UTF-32 or UTF-16, or
 * UTF-16 by the NULs of mostly-ASCII UTF-16 — git calls that binary, yet a `.env` saved so still holds
 * a token. Null for anything else with a NUL, or that its BOM's encoding cannot decode: never clean,
 * the caller lists it as pushed unscanned.
 */
export function decodeText(bytes: Buffer): string | null {
  // UTF-32 LE's BOM begins with UTF-16 LE's: it is looked for first.
  if (bytes[0] === 0xff && bytes[1] === 0xfe && bytes[2] === 0 && bytes[3] === 0) return utf32(bytes.subarray(4), 'le');
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff) return utf32(bytes.subarray(4), 'be');
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16(bytes.subarray(2), 'le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16(bytes.subarray(2), 'be');
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  const probe = body.subarray(0, BINARY_PROBE_BYTES);
  if (!probe.includes(0)) return body.toString('utf8');
  const layout = utf16Layout(probe);
  return layout === null ? null : utf16(body, layout);
}

const split = (output: string): string[] => output.split('\0').filter(Boolean);

/**
 * What the snapshot would add or change: tracked files that differ from HEAD (staged or not) and
 * untracked files that are not ignored. Ignored files never reach the snapshot, so they are not read.
 * One `git status` lists both (it was a `diff HEAD` and an `ls-files --others`: each git process
 * costs the daemon a fork); a file staged and then changed back to HEAD's content is listed too,
 * and scanned, which is only stricter.
 */
export async function changedPaths(root: string, head: string | null): Promise<string[]> {
  const options = { cwd: root, timeoutMs: GIT_TIMEOUT_MS };
  if (head === null) {
    const tracked = await git(['ls-files', '-z', '--cached', '--', '.', OWN_FILES_EXCLUDE], options);
    const untracked = await git(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', OWN_FILES_EXCLUDE], options);
    return [...new Set([...split(tracked), ...split(untracked)])].sort();
  }
  // The daemon's own files are never added (snapshot.ts); one staged anyway is scanned by the staged audit.
  const status = await git(
    ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all', '--', '.', OWN_FILES_EXCLUDE],
    options,
  );
  const paths = new Set<string>();
  for (const record of split(status)) {
    // `1 XY sub mH mI mW hH hI path`, `u XY sub m1 m2 m3 mW h1 h2 h3 path`, `? path`; no `2` (no renames).
    const fields = record.startsWith('1 ') ? 8 : record.startsWith('u ') ? 10 : record.startsWith('? ') ? 1 : -1;
    if (fields === -1) continue;
    paths.add(record.split(' ').slice(fields).join(' '));
  }
  return [...paths].sort();
}

type Read =
  { kind: 'text'; content: string; source: 'file' | 'link'; bytes: Uint8Array } | { kind: 'skip' } | { kind: 'unscanned'; why: Unscanned; bytes?: Uint8Array };

/**
 * A regular file's text, read without following a link; a link's target path, which is what git
 * pushes for it (a name like any other); directories go in as what they are.
 */
async function readCandidate(root: string, path: string, maxBytes: number): Promise<Read> {
  const full = join(root, path);
  const stats = await lstat(full).catch((error: NodeJS.ErrnoException) => {
    // Deleted since HEAD: the snapshot records the deletion, there is nothing to scan.
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (stats?.isSymbolicLink() === true) {
    const target = await readlink(full, { encoding: 'buffer' });
    return { kind: 'text', content: target.toString('utf8'), source: 'link', bytes: target };
  }
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
    const content = decodeText(bytes);
    return content === null ? { kind: 'unscanned', why: 'binary', bytes } : { kind: 'text', content, source: 'file', bytes };
  } finally {
    await handle.close();
  }
}

const DISABLE_RULE = '@secretlint/secretlint-rule-filter-comments';
const DISABLE = 'secretlint-disable';

/**
 * The line of a `secretlint-disable` comment that HEAD's version of the file does not have, or null.
 * Such a comment exempts what follows from the scan, and an agent can write one: one that was not
 * already committed is reported as a finding of its own rather than obeyed.
 */
export async function newDisableComment(root: string, head: string | null, path: string, content: string): Promise<number | null> {
  if (!content.includes(DISABLE)) return null;
  const committed =
    head === null
      ? null
      : await runGit(['cat-file', 'blob', '--end-of-options', `${head}:${path}`], { cwd: root, timeoutMs: GIT_TIMEOUT_MS, stdoutEncoding: 'latin1' });
  const before = committed?.code === 0 ? (decodeText(Buffer.from(committed.stdout, 'latin1')) ?? '') : '';
  const known = new Set(
    before
      .split('\n')
      .filter((line) => line.includes(DISABLE))
      .map((line) => line.trim()),
  );
  const index = content.split('\n').findIndex((line) => line.includes(DISABLE) && !known.has(line.trim()));
  return index === -1 ? null : index + 1;
}

export function reasonOf(verdict: NonNullable<SecretVerdict>): string {
  const more = verdict.count > 1 ? ` (+${verdict.count - 1} more)` : '';
  return `secretlint: ${verdict.id} on line ${verdict.line}${more}`;
}

/** What a scan found in one file: its first finding and how many (what the withheld record says), or null. */
export function verdictOf(hits: readonly SecretHit[]): SecretVerdict {
  const first = hits[0];
  return first === undefined ? null : { rule: first.rule, id: first.id, line: first.line, count: hits.length };
}

/** Files read at once: the reads wait on the disk, the scan after them on the CPU. */
const READ_AHEAD = 8;

export function scanFailed(error: unknown, what: string): HandoffError {
  return new HandoffError(
    'drain_blocked',
    `the secret scan failed on ${what} (${(error as Error).message}), so nothing was pushed; run \`handoff resume\` once the scanner works`,
    'run `handoff resume` once the scanner works',
  );
}

/**
 * Scans every file the snapshot would push — its name, then its content — and says which to
 * withhold. A scanner that throws or a scan past its budget is a blocked drain: nothing unscanned
 * is ever pushed.
 */
export async function scanForSecrets(root: string, options: SecretScanOptions): Promise<SecretScan> {
  const scanner = options.scanner ?? secretlintScanner;
  const deadline = options.now() + options.timeoutMs;
  const head = options.head === undefined ? await currentRef(root, 'HEAD') : options.head;
  // Both only read; the list is decided by the user's own file, whatever the paths turn out to be.
  const [paths, allowList] = await Promise.all([options.paths === undefined ? changedPaths(root, head) : [...options.paths].sort(), readAllowList(root)]);
  const withheld: Withheld[] = [];
  const withhold: string[] = [];
  const allowed: string[] = [];
  const unscanned: { path: string; why: Unscanned }[] = [];
  // Every name in one call: a name travels in the tree and in the records, so one that holds a
  // secret withholds its file whatever the allow list says, and is shown only with the marker.
  const names = await scanTexts(paths, scanner).catch((error: unknown) => {
    throw scanFailed(error, 'the file names');
  });
  let scanned = 0;
  let cached = 0;
  const cache = options.verdicts;
  for (let from = 0; from < paths.length; from += READ_AHEAD) {
    const batch = paths.slice(from, from + READ_AHEAD);
    // A name that holds a secret withholds its file unread.
    const reads = await Promise.all(batch.map((path, k) => ((names[from + k] ?? []).length > 0 ? null : readCandidate(root, path, options.maxFileBytes))));
    for (const [k, path] of batch.entries()) {
      const index = from + k;
      options.onProgress?.(index, paths.length);
      if (options.now() > deadline) {
        throw new HandoffError(
          'drain_blocked',
          `the secret scan did not finish within ${options.timeoutMs} ms (${scanned + cached} of ${paths.length} files scanned), so nothing was pushed; raise secret_scan.timeout_ms in config.json, then run \`handoff resume\``,
          'raise secret_scan.timeout_ms in config.json, then run `handoff resume`',
        );
      }
      const read = reads[k] ?? null;
      if (read === null) {
        const inName = names[index] ?? [];
        const first = inName[0];
        withheld.push({ path: redactHits(path, inName), rule: first?.rule ?? 'unknown', reason: `secretlint: ${first?.id ?? 'finding'} in the file name` });
        withhold.push(path);
        continue;
      }
      if (read.kind === 'skip') continue;
      if (read.kind === 'unscanned') {
        if (read.bytes !== undefined) options.seen?.set(path, blobIds(read.bytes));
        unscanned.push({ path, why: read.why });
        continue;
      }
      const key = cache === undefined ? undefined : verdictKey(cache.fingerprint, read.source, path, read.bytes);
      let verdict = key === undefined ? undefined : cache?.get(key);
      if (verdict === undefined) {
        try {
          verdict = verdictOf(await scanner(path, read.content));
        } catch (error) {
          throw scanFailed(error, 'a file');
        }
        scanned++;
        if (key !== undefined) cache?.set(key, verdict);
      } else {
        cached++;
      }
      // Not cached: it depends on HEAD's version of the file as well.
      const disabled = await newDisableComment(root, head, path, read.content);
      if (verdict === null && disabled === null) {
        options.seen?.set(path, blobIds(read.bytes));
        continue;
      }
      if (allowList.paths.has(path)) {
        options.seen?.set(path, blobIds(read.bytes));
        allowed.push(path);
      } else {
        withheld.push(
          verdict !== null
            ? { path, rule: verdict.rule, reason: reasonOf(verdict) }
            : { path, rule: DISABLE_RULE, reason: `secretlint: a ${DISABLE} comment on line ${disabled ?? 0} that HEAD's version of the file does not have` },
        );
        withhold.push(path);
      }
    }
  }
  return { withheld, withhold, allowed, allow_list: allowList.source, unscanned, scanned, ...(cache === undefined ? {} : { cached }) };
}
