export { gitClient, NON_INTERACTIVE_ENV } from './git-client.js';
export { infoExcludePath, resolveRepoRoot } from './repo-root.js';
