import type { EventSink } from '../garden/context.js';
import { apiDomainName } from './api-domain.js';
import { DEFAULT_API_RECORD_TTL_SECONDS, type ApiRecord, type ApiRecords } from './api-records.js';
import { describeTarget, type ApiRecordTarget } from './record-target.js';
import type { ApiRecordDecision } from './serving.js';

/** The deployment's settings for API domains. */
export interface ApiDomainSettings {
  /** `api.<shoot>.<project>.<externalDomain>`; the zone of this domain holds the records. */
  readonly externalDomain: string;
  /** Seconds (default 60): how long a resolver may keep sending clients to the old seed after a switch. */
  readonly ttlSeconds?: number;
}

export interface ApiRecordWriterOptions {
  readonly records: ApiRecords;
  readonly settings: ApiDomainSettings;
  readonly events: EventSink;
}

export interface ShootRef {
  readonly project: string;
  readonly name: string;
}

/** What a write did, for step messages and answers. */
export interface ApiRecordOutcome {
  readonly record: string;
  readonly changed: boolean;
  readonly target: ApiRecordTarget | undefined;
  readonly message: string;
}

/**
 * Carries out the decisions of `decideSwitch` and `decideCreate` against the API records, and deletes a
 * shoot's record: the one place that writes API records and announces their changes (`ApiRecordChanged`).
 */
export class ApiRecordWriter {
  constructor(private readonly options: ApiRecordWriterOptions) {}

  nameOf(shoot: ShootRef): string {
    return apiDomainName({
      shoot: shoot.name,
      project: shoot.project,
      externalDomain: this.options.settings.externalDomain,
    });
  }

  async current(shoot: ShootRef): Promise<ApiRecord | undefined> {
    return this.options.records.get(this.nameOf(shoot));
  }

  /** The TTL the deployment gives API records. */
  get ttlSeconds(): number {
    return this.options.settings.ttlSeconds ?? DEFAULT_API_RECORD_TTL_SECONDS;
  }

  /**
   * Gives the record `ttl` and keeps its target, on condition that the target is still `current`'s (a
   * record that changed meanwhile is a conflict). Announces nothing: where the record points is unchanged.
   */
  async retime(input: { shoot: ShootRef; current: ApiRecord; ttl: number }): Promise<void> {
    const { current, ttl } = input;
    if (current.ttl === ttl) return;
    const target = { type: current.type, value: current.value };
    await this.options.records.set({ name: this.nameOf(input.shoot), target, expected: target, ttl });
  }

  /**
   * Writes a `set` decision (conditionally) with the deployment's TTL; `done` writes only a TTL that is not
   * the deployment's (one a migration lowered); `wait` and `keep` must be handled by the caller.
   */
  async apply(input: {
    shoot: ShootRef;
    decision: Extract<ApiRecordDecision, { action: 'set' | 'done' }>;
    seedName: string;
    migrationId?: string;
  }): Promise<ApiRecordOutcome> {
    const { shoot, decision } = input;
    const record = this.nameOf(shoot);
    if (decision.action === 'done') {
      if (decision.ttl !== undefined && decision.ttl !== this.ttlSeconds)
        await this.options.records.set({
          name: record,
          target: decision.target,
          expected: decision.target,
          ttl: this.ttlSeconds,
        });
      return {
        record,
        changed: false,
        target: decision.target,
        message: `${record} is ${describeTarget(decision.target)} (${decision.reason})`,
      };
    }
    await this.options.records.set({
      name: record,
      target: decision.target,
      expected: decision.expected,
      ttl: this.ttlSeconds,
    });
    await this.options.events.publish('ApiRecordChanged', {
      project: shoot.project,
      shoot: shoot.name,
      ...(input.migrationId ? { migrationId: input.migrationId } : {}),
      record,
      seedName: input.seedName,
      from: decision.expected ? describeTarget(decision.expected) : null,
      to: describeTarget(decision.target),
      reason: decision.reason,
    });
    const from = decision.expected ? ` (was ${describeTarget(decision.expected)})` : '';
    return {
      record,
      changed: true,
      target: decision.target,
      message: `${record} = ${describeTarget(decision.target)}${from}: ${decision.reason}`,
    };
  }

  /** Deletes the shoot's record, whatever it points at; a record already gone is fine. */
  async remove(input: { shoot: ShootRef; seedName: string | null }): Promise<ApiRecordOutcome> {
    const record = this.nameOf(input.shoot);
    const current = await this.options.records.get(record);
    if (current === undefined)
      return { record, changed: false, target: undefined, message: `${record} is gone already` };
    // Conditional on what was read: a concurrent change is reported, not silently removed.
    await this.options.records.delete({ name: record, expected: current });
    await this.options.events.publish('ApiRecordChanged', {
      project: input.shoot.project,
      shoot: input.shoot.name,
      record,
      seedName: input.seedName,
      from: describeTarget(current),
      to: null,
      reason: 'the shoot was deleted',
    });
    return { record, changed: true, target: undefined, message: `${record} deleted (was ${describeTarget(current)})` };
  }
}
