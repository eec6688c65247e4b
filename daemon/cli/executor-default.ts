import { hostname, userInfo } from 'node:os';

/** Where an accept's executor id came from, said beside it so nobody wonders who holds the lease. */
export const DEFAULT_EXECUTOR_WORDS = 'your login and host name, as --as was not given';

/**
 * The executor id an accept takes when `--as` is not given: `login@host`, the name a person is known by
 * on this machine, folded into the characters an executor id allows (schemas/lease.schema.ts).
 */
export function defaultExecutor(): string {
  const login = (() => {
    try {
      return userInfo().username;
    } catch (error) {
      // A uid with no passwd entry (a container): the id still says which machine holds the lease.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ERR_SYSTEM_ERROR') return 'user';
      throw error;
    }
  })();
  return `${login}@${hostname()}`.replace(/[^A-Za-z0-9._:@/+-]/g, '-').slice(0, 200);
}
