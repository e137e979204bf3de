import type { MiddlewareStack } from '@smithy/types';
import { dynamoReadUnits, dynamoWriteUnits, type IndexKeys } from './dynamodb-units.js';

/**
 * What a piece of work asked of AWS: calls per service and operation (`DynamoDB.Query`), and for DynamoDB
 * the items it read and wrote and the capacity units they cost at on-demand pricing, computed from the
 * items' sizes as DynamoDB bills them (the emulator's own ConsumedCapacity charges a Query 0.5 whatever
 * it returns, so it is not used). The periodic jobs return one per round: the fleet benchmark's figures
 * and its cost model come from these, and on AWS they say in the logs what a round cost.
 */
export interface CallReport {
  /** `<Service>.<Operation>` to count, e.g. `DynamoDB.BatchGetItem`, `Route53.ListResourceRecordSets`. */
  calls: Record<string, number>;
  dynamodb: { itemsRead: number; itemsWritten: number; readUnits: number; writeUnits: number };
}

export function emptyCallReport(): CallReport {
  return { calls: {}, dynamodb: { itemsRead: 0, itemsWritten: 0, readUnits: 0, writeUnits: 0 } };
}

/** Adds `more` into `into` (the fan-out's reports into the round's). */
export function addCallReports(into: CallReport, more: CallReport): CallReport {
  for (const [call, n] of Object.entries(more.calls)) into.calls[call] = (into.calls[call] ?? 0) + n;
  into.dynamodb.itemsRead += more.dynamodb.itemsRead;
  into.dynamodb.itemsWritten += more.dynamodb.itemsWritten;
  into.dynamodb.readUnits += more.dynamodb.readUnits;
  into.dynamodb.writeUnits += more.dynamodb.writeUnits;
  return into;
}

/** The calls of one service in a report, summed over its operations. */
export function callsOf(report: CallReport, service: string): number {
  return Object.entries(report.calls)
    .filter(([call]) => call.startsWith(`${service}.`))
    .reduce((n, [, count]) => n + count, 0);
}

/** Any AWS SDK v3 client. */
interface Meterable {
  middlewareStack: { add: (...args: never[]) => unknown };
}

/**
 * Counts the calls of every client it is attached to, until `take()` hands the report over and starts
 * a new one. One meter per Lambda execution environment is one per invocation (an environment runs one
 * invocation at a time).
 */
export class CallMeter {
  private report = emptyCallReport();

  /** `dynamodbIndexes`: the table's global secondary indexes (each one holding an item bills its write again). */
  constructor(private readonly options: { dynamodbIndexes?: readonly IndexKeys[] } = {}) {}

  /** The client, counted from now on under `service` (`DynamoDB`, `Route53`, `SQS`, ...). */
  attach<C extends Meterable>(client: C, service: string): C {
    (client.middlewareStack as unknown as MiddlewareStack<object, object>).add(
      (next, context) => async (args) => {
        const operation = String((context as { commandName?: string }).commandName ?? 'Unknown').replace(
          /Command$/,
          '',
        );
        const result = await next(args);
        // The document client marshals after this point and unmarshals before it: what is seen here are its
        // plain values then (it marks the call as its own on the way), else DynamoDB's attribute values.
        const features = (context as { __aws_sdk_context?: { features?: Record<string, string> } }).__aws_sdk_context
          ?.features;
        this.count(
          service,
          operation,
          args.input as Record<string, unknown>,
          result.output as Record<string, unknown>,
          features?.DDB_MAPPER !== undefined,
        );
        return result;
      },
      { step: 'serialize', priority: 'high', name: 'gardenlessCallMeter', override: true },
    );
    return client;
  }

  /** The report so far; the meter starts afresh. */
  take(): CallReport {
    const report = this.report;
    this.report = emptyCallReport();
    return report;
  }

  private count(
    service: string,
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
    native: boolean,
  ) {
    const key = `${service}.${operation}`;
    this.report.calls[key] = (this.report.calls[key] ?? 0) + 1;
    if (service !== 'DynamoDB') return;
    const d = this.report.dynamodb;
    const read = dynamoReadUnits(operation, input, output, native);
    const written = dynamoWriteUnits(operation, input, output, this.options.dynamodbIndexes, native);
    d.itemsRead += read.items;
    d.readUnits += read.units;
    d.itemsWritten += written.items;
    d.writeUnits += written.units;
  }
}
