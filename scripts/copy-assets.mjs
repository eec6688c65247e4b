// The dashboard page ships in the package: tsc compiles only TypeScript, so its static files are
// copied next to the compiled module that serves them (dist/daemon/http/dashboard/assets/).
import { cpSync } from 'node:fs';

const from = new URL('../daemon/http/dashboard/assets/', import.meta.url);
const to = new URL('../dist/daemon/http/dashboard/assets/', import.meta.url);
cpSync(from, to, { recursive: true });
