/**
 * Writes the OpenAPI document of the garden API to `openapi.json` in the repository root, generated
 * from the route table and the schemas that validate requests. Run it (`npm run openapi`) after
 * changing a route or a schema; a unit test fails while the committed document is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../functions/api/openapi.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };
const target = `${root}openapi.json`;

writeFileSync(target, `${JSON.stringify(openApiDocument({ version }), null, 2)}\n`);
console.log(`wrote ${target} (version ${version})`);
