/**
 * Writes docs/command-protocol.schema.json from the zod schemas in core/commands (the single source).
 * `--check` exits 1 when the committed file differs instead of writing it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandProtocolJsonSchema } from '../core/commands/index.js';

export const COMMAND_PROTOCOL_SCHEMA_PATH = join(import.meta.dirname, '..', 'docs', 'command-protocol.schema.json');

export function renderCommandProtocolSchema(): string {
  return `${JSON.stringify(commandProtocolJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === import.meta.filename) {
  const text = renderCommandProtocolSchema();
  if (process.argv.includes('--check')) {
    const committed = readFileSync(COMMAND_PROTOCOL_SCHEMA_PATH, 'utf8');
    if (committed !== text) {
      console.error('docs/command-protocol.schema.json is out of date: run npx tsx scripts/command-protocol.ts');
      process.exit(1);
    }
  } else {
    writeFileSync(COMMAND_PROTOCOL_SCHEMA_PATH, text);
    console.log(`wrote ${COMMAND_PROTOCOL_SCHEMA_PATH}`);
  }
}
