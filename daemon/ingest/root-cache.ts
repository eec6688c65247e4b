/** Remembered directory → git root lookups; the status-line hook asks many times a minute. */
const ROOT_CACHE_LIMIT = 1024;

export type RootResolver = (dir: string) => Promise<string>;

/**
 * Wraps a resolver so each directory costs one `git rev-parse` until the cache fills and restarts.
 * Lookups of one directory that arrive while its first is running share it (eight connections
 * opening at once made eight git processes); a failed lookup is not remembered.
 */
export function cachedRootResolver(resolve: RootResolver): RootResolver {
  const roots = new Map<string, string>();
  const running = new Map<string, Promise<string>>();
  return async (dir) => {
    const cached = roots.get(dir);
    if (cached !== undefined) return cached;
    const pending = running.get(dir);
    if (pending !== undefined) return pending;
    const lookup = resolve(dir).then((root) => {
      if (roots.size >= ROOT_CACHE_LIMIT) roots.clear();
      roots.set(dir, root);
      return root;
    });
    running.set(dir, lookup);
    try {
      return await lookup;
    } finally {
      running.delete(dir);
    }
  };
}
