/** Remembered directory → git root lookups; the status-line hook asks many times a minute. */
const ROOT_CACHE_LIMIT = 1024;

export type RootResolver = (dir: string) => Promise<string>;

/** Wraps a resolver so each directory costs one `git rev-parse` until the cache fills and restarts. */
export function cachedRootResolver(resolve: RootResolver): RootResolver {
  const roots = new Map<string, string>();
  return async (dir) => {
    const cached = roots.get(dir);
    if (cached !== undefined) return cached;
    const root = await resolve(dir);
    if (roots.size >= ROOT_CACHE_LIMIT) roots.clear();
    roots.set(dir, root);
    return root;
  };
}
