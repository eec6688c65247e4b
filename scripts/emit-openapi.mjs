// Writes the HTTP API reference from the routes' own schemas (after `npm run build`):
// docs/openapi.json (OpenAPI 3.1) and docs/api-reference.md. test/unit/docs-openapi.test.ts fails
// when a committed file differs from what the routes say today.
import { writeFileSync } from 'node:fs';
import { openApiFiles } from '../dist/daemon/http/openapi.js';

const { json, markdown } = await openApiFiles();
writeFileSync(new URL('../docs/openapi.json', import.meta.url), json);
writeFileSync(new URL('../docs/api-reference.md', import.meta.url), markdown);
console.log('wrote docs/openapi.json and docs/api-reference.md');
