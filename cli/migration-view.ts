import type { MigrationRecord, StepState } from '../core/migration/record.js';
import { table } from './render.js';

/** What `GET /projects/{p}/shoots/{n}/migration` answers: the record plus its progress. */
export type MigrationResponse = MigrationRecord & { progress: number };

export interface StepView {
  id: string;
  title: string;
  state: StepState;
  /** One character for the plain-text list. */
  marker: string;
  /** The line an operator reads: title, attempts when repeated, duration when known. */
  line: string;
  /** The step's message (why it was skipped, what failed, what it did), when there is one. */
  detail: string | undefined;
}

export interface MigrationView {
  /** `Migration <id>: <source> -> <destination> (<path> path)` */
  heading: string;
  /** `Running 42%`, `Succeeded`, `Error at restore-etcd: ...` */
  status: string;
  steps: StepView[];
  /** True once the migration is Succeeded or Error: a watch stops there. */
  done: boolean;
  /** The exit code of a watch that ends here (0 Succeeded, 1 Error), or undefined while it runs. */
  exitCode: 0 | 1 | undefined;
}

const MARKERS: Record<StepState, string> = { pending: '·', running: '…', succeeded: '✔', failed: '✖', skipped: '↓' };

/** A short duration: 850ms, 12.3s, 4m05s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

function stepDuration(step: MigrationRecord['steps'][number], now: Date): string | undefined {
  if (!step.startedAt) return undefined;
  const end = step.endedAt ? Date.parse(step.endedAt) : step.state === 'running' ? now.getTime() : undefined;
  return end === undefined ? undefined : formatDuration(end - Date.parse(step.startedAt));
}

/**
 * The migration as an operator reads it, from the record alone (and `now`, for the running step's
 * duration): the same function feeds the one-shot output, the live list and the tests.
 */
export function migrationView(record: MigrationResponse, options: { now: Date }): MigrationView {
  const path = record.path
    ? `, ${record.path} path${record.switchedToBadPathAt ? ` (switched after ${record.badPathSwitch?.failedStep ?? 'a good-path step'})` : ''}`
    : '';
  const heading = `Migration ${record.id}: ${record.shoot.project}/${record.shoot.name} ${record.source.name} -> ${record.destination.name}${path}`;
  const done = record.state !== 'Running';
  const status =
    record.state === 'Succeeded'
      ? 'Succeeded'
      : record.state === 'Error'
        ? `Error at ${record.error?.step ?? 'an unknown step'}: ${record.error?.message ?? 'no message'} (call migrate again to resume)`
        : `Running ${record.progress}%${record.attempts > 1 ? `, attempt ${record.attempts}` : ''}`;
  const waiting = waitForOldAnswers(record, options.now);
  const steps = record.steps.map((s): StepView => {
    const extras = [s.attempts > 1 ? `attempt ${s.attempts}` : undefined, stepDuration(s, options.now)].filter(
      (x): x is string => x !== undefined,
    );
    return {
      id: s.id,
      title: s.title,
      state: s.state,
      marker: MARKERS[s.state],
      line: extras.length > 0 ? `${s.title} (${extras.join(', ')})` : s.title,
      detail: s.id === waiting?.step ? waiting.detail : s.message,
    };
  });
  return {
    heading,
    status,
    steps,
    done,
    exitCode: record.state === 'Succeeded' ? 0 : record.state === 'Error' ? 1 : undefined,
  };
}

/**
 * A running migration with no step running, waiting for resolvers' answers of the API record from before
 * the migration (its old TTL) to run out: the good path waits so before the pre-copy (docs/api-domain.md).
 * The record says until when; the next step says so, or a watch would show nothing for up to the old TTL.
 */
function waitForOldAnswers(record: MigrationResponse, now: Date): { step: string; detail: string } | undefined {
  const until = record.apiRecordTtl?.cachedUntil;
  if (record.state !== 'Running' || until === undefined || Date.parse(until) <= now.getTime()) return undefined;
  if (record.steps.some((s) => s.state === 'running')) return undefined;
  const next = record.steps.find((s) => s.state === 'pending');
  if (next === undefined) return undefined;
  return {
    step: next.id,
    detail: `starts at ${until}, once resolvers' answers of the API record from before the migration (TTL ${record.apiRecordTtl!.from} s) have expired`,
  };
}

/** The plain-text form: heading, status, then one line per step with its marker and, indented, its message. */
export function formatMigration(view: MigrationView): string {
  const lines = [view.heading, view.status, ''];
  for (const step of view.steps) {
    lines.push(`${step.marker} ${step.line}`);
    if (step.detail) lines.push(`    ${step.detail}`);
  }
  return lines.join('\n');
}

/** The step table of `shoot migration` without --watch. */
export function migrationTable(record: MigrationResponse, options: { now: Date }): string {
  const view = migrationView(record, options);
  const rows = record.steps.map((s) => [
    s.id,
    s.state,
    String(s.attempts),
    s.startedAt ?? '-',
    stepDuration(s, options.now) ?? '-',
    s.message ?? '',
  ]);
  return [
    view.heading,
    view.status,
    '',
    table(['STEP', 'STATE', 'ATTEMPTS', 'STARTED', 'DURATION', 'MESSAGE'], rows),
  ].join('\n');
}

/** What the migrate call answered, in one line. */
export function migrateAccepted(
  body: { migrationId: string; resumed: boolean; destinationSeed: string },
  shoot: string,
): string {
  return `migration ${body.migrationId} of ${shoot} to ${body.destinationSeed} ${body.resumed ? 'resumed from its last completed step' : 'started'}`;
}

export { apiErrorLine } from './api.js';
