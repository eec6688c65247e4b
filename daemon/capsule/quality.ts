import { lstat } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import { scoreCapsule, type CapsuleQuality, type WorkspaceContext } from '../../protocol/index.js';
import type { Capsule } from '../../schemas/index.js';

/** Which of the capsule's first files are files of this work tree (never outside it). */
async function existingFiles(root: string, capsule: Capsule | null): Promise<Set<string>> {
  const found = new Set<string>();
  for (const path of capsule?.first_files ?? []) {
    const clean = normalize(path);
    if (isAbsolute(clean) || clean.startsWith('..')) continue;
    if ((await lstat(join(root, clean)).catch(() => null))?.isFile()) found.add(path);
  }
  return found;
}

/** Observes what the scoring needs (files, times) and lets the pure rules judge. */
export async function capsuleQuality(root: string, capsule: Capsule | null, context: WorkspaceContext): Promise<CapsuleQuality> {
  return scoreCapsule(capsule, {
    existingFiles: await existingFiles(root, capsule),
    capsuleUpdatedAt: context.capsule?.updated_at ?? null,
    stageStartedAt: context.prepare_since ?? context.cycle?.started_at ?? null,
  });
}
