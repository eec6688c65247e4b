import type { BigIntStats, Stats } from 'node:fs';
import { HandoffError } from '../../protocol/errors.js';
import { shellQuote } from '../../protocol/shell-quote.js';
import { privateProblem, type PrivateKind } from './private-rule.js';

export type { PrivateKind } from './private-rule.js';

export function octalMode(mode: number | bigint): string {
  return `0${(Number(mode) & 0o7777).toString(8).padStart(3, '0')}`;
}

/**
 * Refuses a state-dir entry another local user could read, replace or redirect: the daemon's token
 * is the only thing standing between other users and the lease. `stat` must come from lstat or an
 * fstat of a handle opened with O_NOFOLLOW, so a symlink is seen as one.
 */
export function assertPrivate(path: string, stat: Stats | BigIntStats, kind: PrivateKind, uid: number): void {
  const quoted = shellQuote(path);
  switch (privateProblem(stat, kind, uid)) {
    case null:
      return;
    case 'symlink':
      throw insecure(
        `${path} is a symlink; it must be a real ${kind} owned by you`,
        `remove the link (rm ${quoted}) and let the daemon create the ${kind}, or point HANDOFF_STATE_DIR at the target`,
        path,
        stat,
      );
    case 'kind':
      throw insecure(`${path} is not a ${kind}`, `move it away (mv ${quoted} ${shellQuote(`${path}.old`)}) so the daemon can create the ${kind}`, path, stat);
    case 'owner':
      throw insecure(
        `${path} is owned by uid ${String(stat.uid)}, not by uid ${uid} that runs the daemon`,
        `chown ${uid} ${quoted}, or use a state dir you own (HANDOFF_STATE_DIR)`,
        path,
        stat,
      );
    case 'mode':
      throw insecure(
        `${path} has mode ${octalMode(stat.mode)}; group and others must have no access`,
        `chmod ${kind === 'directory' ? '700' : '600'} ${quoted}`,
        path,
        stat,
      );
  }
}

function insecure(message: string, hint: string, path: string, stat: Stats | BigIntStats): HandoffError {
  return new HandoffError('insecure_state_dir', message, hint, {
    path,
    mode: octalMode(stat.mode),
    uid: Number(stat.uid),
  });
}
