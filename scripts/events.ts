/**
 * Writes docs/events/<DetailType>.schema.json from the zod schemas in core/events (the single source the
 * EventBridge sink builds events with). `--check` exits 1 when a committed file differs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventJsonSchemas } from '../core/events/schemas.js';

export const EVENTS_DIR = join(import.meta.dirname, '..', 'docs', 'events');

export function renderEventSchemas(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(eventJsonSchemas()).map(([type, schema]) => [
      `${type}.schema.json`,
      `${JSON.stringify(schema, null, 2)}\n`,
    ]),
  );
}

if (process.argv[1] === import.meta.filename) {
  const files = renderEventSchemas();
  const check = process.argv.includes('--check');
  mkdirSync(EVENTS_DIR, { recursive: true });
  let stale = 0;
  for (const [file, text] of Object.entries(files)) {
    const path = join(EVENTS_DIR, file);
    if (!check) writeFileSync(path, text);
    else if (
      (() => {
        try {
          return readFileSync(path, 'utf8');
        } catch {
          return '';
        }
      })() !== text
    )
      stale += 1;
  }
  if (check && stale > 0) {
    console.error(`${stale} event schema(s) in docs/events are out of date: run npm run events`);
    process.exit(1);
  }
  if (!check) console.log(`wrote ${Object.keys(files).length} event schemas to ${EVENTS_DIR}`);
}
