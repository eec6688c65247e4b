import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { HandoffError, parseCapsuleMarkdown } from '../../protocol/index.js';
import { CapsuleSchema, type Capsule } from '../../schemas/index.js';
import { writeFileAtomic } from '../store/index.js';
import { NotRegularFileError, readRegularFile } from '../store/regular-file.js';
import { precompiled } from '../precompiled.js';
import { describeErrors } from '../schema-check.js';
import { asCommitted } from '../git/index.js';
import { WORKSPACE_DIR, workspaceDir } from '../workspaces/workspace-dir.js';

export const CAPSULE_FILE = 'capsule.json';
export const capsulePath = (root: string): string => join(workspaceDir(root), CAPSULE_FILE);

const validate = precompiled<Capsule>(CapsuleSchema);

/** A Markdown capsule (the manifest's headings) as the capsule's JSON shape, or `invalid_body`. */
export function capsuleFromMarkdown(text: string): unknown {
  try {
    return parseCapsuleMarkdown(text);
  } catch (error) {
    throw new HandoffError('invalid_body', `the Markdown capsule: ${(error as Error).message}`, 'start from `handoff capsule template`');
  }
}

/** Validates (filling defaults) or throws `invalid_body` naming the field. */
export function parseCapsule(value: unknown): Capsule {
  let copy: unknown;
  try {
    copy = structuredClone(value);
  } catch (error) {
    // JSON nested a few thousand levels deep overflows the copy's stack: bad input, not a daemon failure.
    throw new HandoffError(
      'invalid_body',
      `the capsule cannot be read: ${(error as Error).message}`,
      'send a capsule of the documented fields; nothing in it is nested deeply',
    );
  }
  if (!validate(copy)) {
    throw new HandoffError(
      'invalid_body',
      describeErrors(validate.errors, 'capsule'),
      '`handoff capsule template` prints a capsule with every field; compare with `handoff capsule show` of a valid one',
    );
  }
  return copy;
}

export interface CapsuleRead {
  readonly capsule: Capsule | null;
  readonly sha256: string | null;
  /** Why the file on disk is not a valid capsule, or null. */
  readonly error: string | null;
}

/** Where the capsule is, relative to the repository's root (as git names it). */
const CAPSULE_IN_REPO = `${WORKSPACE_DIR}/${CAPSULE_FILE}`;

/**
 * The agent's capsule as it is on disk now; a missing file is `capsule: null`, not an error. Only text
 * written in this checkout is the agent's: a capsule whose bytes are exactly what the index or HEAD
 * holds came with a commit (a clone, a pull), is untrusted text, and is not used.
 */
export async function readCapsule(root: string): Promise<CapsuleRead> {
  let bytes: Buffer;
  try {
    // A link planted here must not make the daemon read (and quote in status) another file.
    bytes = await readRegularFile(capsulePath(root));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { capsule: null, sha256: null, error: null };
    if (error instanceof NotRegularFileError) return { capsule: null, sha256: null, error: `${CAPSULE_FILE} is ${error.what}; only a regular file is read` };
    return { capsule: null, sha256: null, error: `unreadable: ${code ?? 'error'}` };
  }
  const text = bytes.toString('utf8');
  const sha256 = createHash('sha256').update(text).digest('hex');
  if (await asCommitted(root, CAPSULE_IN_REPO, bytes)) {
    return {
      capsule: null,
      sha256,
      error: `${CAPSULE_IN_REPO} is committed in this repository: it came with a commit, not from this checkout's agent, so its text is untrusted and not used (the agent's \`handoff capsule set\` writes its own)`,
    };
  }
  try {
    return { capsule: parseCapsule(JSON.parse(text)), sha256, error: null };
  } catch (error) {
    return { capsule: null, sha256, error: (error as Error).message };
  }
}

export async function writeCapsule(root: string, capsule: Capsule): Promise<string> {
  const text = `${JSON.stringify(capsule, null, 2)}\n`;
  await writeFileAtomic(capsulePath(root), text, 0o600);
  return createHash('sha256').update(text).digest('hex');
}
