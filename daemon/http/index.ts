export { buildServer, type ServerDeps } from './build-server.js';
export { allowedHosts, tokenMatches } from './security.js';
