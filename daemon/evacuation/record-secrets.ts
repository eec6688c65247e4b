import { HandoffError, redactHits, type Code } from '../../protocol/index.js';
import type { SecretScanner } from './secret-scan.js';

// Loaded at the first record scanned, never by an idle daemon: secretlint is the largest module it would hold.
const scanModule = () => import('./secret-scan.js');

function collect(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) collect(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) collect(item, out);
}

function rebuild(value: unknown, next: () => string): unknown {
  if (typeof value === 'string') return next();
  if (Array.isArray(value)) return value.map((item) => rebuild(item, next));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rebuild(item, next)]));
  return value;
}

/**
 * A record (plain JSON data) with each secret in its string values replaced by the marker naming the
 * rule — validation output and command, capsule, reason, file names — from one scanner call. The
 * same input gives the same bytes, so a resumed drain writes the same record.
 */
export async function redactRecord<T>(value: T, scanner?: SecretScanner): Promise<{ value: T; redacted: number }> {
  const texts: string[] = [];
  collect(value, texts);
  const { scanTexts, secretlintScanner } = await scanModule();
  const hits = await scanTexts(texts, scanner ?? secretlintScanner);
  let index = 0;
  let redacted = 0;
  const result = rebuild(value, () => {
    const text = texts[index] ?? '';
    const found = hits[index++] ?? [];
    if (found.length === 0) return text;
    redacted++;
    return redactHits(text, found);
  });
  return { value: result as T, redacted };
}

/**
 * The last look at a record's files (names and bytes) before they are committed for the remote:
 * a finding means nothing is committed or pushed. Records are redacted before this, so a hit here is
 * a secret in a field no marker may replace (a token, an executor name).
 */
export async function refuseSecrets(files: Readonly<Record<string, string>>, what: string, code: Code, scanner?: SecretScanner): Promise<void> {
  const { scanTexts, secretlintScanner } = await scanModule();
  const hits = await scanTexts(
    Object.entries(files).flatMap(([path, text]) => [path, text]),
    scanner ?? secretlintScanner,
  );
  const rule = hits.find((found) => found.length > 0)?.[0]?.rule;
  if (rule === undefined) return;
  throw new HandoffError(
    code,
    `${what} would carry a secret (secretlint rule ${rule}), so it was neither committed nor pushed`,
    'remove the secret where it came from (the names and text given to the daemon), then retry; nothing was changed',
  );
}
