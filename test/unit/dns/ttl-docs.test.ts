import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_API_RECORD_TTL_SECONDS, MIGRATION_API_RECORD_TTL_SECONDS } from '../../../core/dns/index.js';
import { TEST_API_RECORD_TTL_SECONDS } from '../../../harness/timings.js';

const root = resolve(import.meta.dirname, '../../..');
const read = (doc: string) => readFileSync(join(root, doc), 'utf8').replace(/\s+/g, ' ');
const M = MIGRATION_API_RECORD_TTL_SECONDS;
const D = DEFAULT_API_RECORD_TTL_SECONDS;

/**
 * The API record's TTLs are bounds the docs promise (how long a client may reach the old seed after a
 * switch): every place that states one states the value the code uses, so that changing a constant fails
 * here until the prose says the same.
 */
describe("the docs state the API record's TTLs the code uses", () => {
  it.each([
    [
      'docs/api-domain.md',
      `| \`apiRecordTtlSeconds\` | ${D} | the records' TTL outside migrations (a migration lowers it to ${M} s first`,
    ],
    ['docs/api-domain.md', `with the deployment's TTL (${D} s) that would be most`],
    ['docs/api-domain.md', `gets a TTL of ${M} s (\`MIGRATION_API_RECORD_TTL_SECONDS\`)`],
    ['docs/api-domain.md', `a record whose TTL is ${M} s or less`],
    ['docs/api-domain.md', `reaches the destination at most ${M} s after the switch`],
    ['docs/api-domain.md', `the test stack's TTL is ${TEST_API_RECORD_TTL_SECONDS} s`],
    ['docs/design.md', `the API record's TTL is lowered to ${M} s while it still names the source`],
    ['docs/design.md', `lowers the record's TTL to ${M} s as it starts`],
    ['docs/design.md', `this window is at most ${M} s after the switch`],
    ['README.md', `answers given with the record's ${D} s TTL have expired`],
    ['README.md', `clients reach the destination within ${M} s of the switch`],
  ])('%s: "%s"', (doc, statement) => {
    expect(read(doc)).toContain(statement);
  });
});
