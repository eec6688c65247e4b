/**
 * The hand-off between an agent's hook and the daemon through the state dir: the hook (and the shell
 * line the installer writes) puts a payload in `<state dir>/spool/` under a dot-name and renames it to
 * its final name; the daemon reads only final names. One place for both sides of that agreement.
 */
export const SPOOL_DIR = 'spool';
/** A complete spooled payload: `<13-digit ms>-<12 hex>.json`. */
export const SPOOLED_NAME = /^\d{13}-[0-9a-f]{12}\.json$/;
