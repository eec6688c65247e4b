import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Validation } from '../../schemas/index.js';
import { runValidation } from '../evacuation/validation-command.js';
import { writeFileAtomic } from '../store/index.js';
import { treeFingerprint } from './tree-fingerprint.js';

/**
 * The validation command run at PREPARE (`rehearsal.validate`), under the drain's own supervisor
 * (daemon/evacuation/validation-command.ts), and its outcome kept as evidence with the work tree's
 * fingerprint before and after it: EVACUATE takes that outcome instead of running the command again
 * only while the fingerprint is still the same (nothing of the tree moved since it ran).
 */

interface Evidence {
  readonly root: string;
  /** The configured command's SHA-256: the evidence stands for that command only. */
  readonly command: string;
  readonly fingerprint: string;
  readonly ran_at: string;
  readonly validation: Validation;
}

const digest = (text: string): string => createHash('sha256').update(text).digest('hex');

const evidenceFile = (dir: string, root: string): string => join(dir, `${digest(root).slice(0, 32)}.validation.json`);

export interface EvidenceOptions {
  readonly dir: string;
  readonly command: string;
  readonly timeoutMs: number;
  readonly gitTimeoutMs: number;
  /** The wall clock (dates the evidence) and the monotonic one (its duration). */
  readonly now: () => number;
  readonly monotonic: () => number;
}

/** Evidence for this command and this tree, still standing: the outcome and when it ran. */
export async function standingValidation(root: string, dir: string, command: string, gitTimeoutMs: number): Promise<Validation | null> {
  const text = await readFile(evidenceFile(dir, root), 'utf8').catch(() => null);
  if (text === null) return null;
  let evidence: Partial<Evidence>;
  try {
    evidence = JSON.parse(text) as Partial<Evidence>;
  } catch {
    return null;
  }
  if (evidence.root !== root || evidence.command !== digest(command) || typeof evidence.fingerprint !== 'string' || typeof evidence.ran_at !== 'string')
    return null;
  if (typeof evidence.validation !== 'object' || evidence.validation === null) return null;
  if ((await treeFingerprint(root, gitTimeoutMs)) !== evidence.fingerprint) return null;
  return { ...evidence.validation, ran_in: 'prepare', ran_at: evidence.ran_at };
}

/**
 * Runs the command now (unless evidence for this very tree stands already) and keeps the evidence
 * when the tree did not move while it ran. Returns the outcome and whether it ran now.
 */
export async function validateAhead(root: string, options: EvidenceOptions): Promise<{ readonly validation: Validation; readonly ran: boolean }> {
  const standing = await standingValidation(root, options.dir, options.command, options.gitTimeoutMs);
  if (standing !== null) return { validation: standing, ran: false };
  const before = await treeFingerprint(root, options.gitTimeoutMs);
  const ranAt = new Date(options.now()).toISOString();
  const validation = await runValidation(root, options.command, options.timeoutMs, options.monotonic);
  const after = await treeFingerprint(root, options.gitTimeoutMs);
  // The tree moved while it ran: its outcome is no evidence for any one tree, so nothing is kept.
  if (before === after) {
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    const evidence: Evidence = { root, command: digest(options.command), fingerprint: after, ran_at: ranAt, validation };
    await writeFileAtomic(evidenceFile(options.dir, root), JSON.stringify(evidence), 0o600);
  }
  return { validation: { ...validation, ran_in: 'prepare', ran_at: ranAt }, ran: true };
}
