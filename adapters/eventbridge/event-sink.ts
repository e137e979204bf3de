import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { buildEvent } from '../../core/events/schemas.js';
import type { EventSink } from '../../core/garden/context.js';

export const EVENT_SOURCE = 'gardenless';

/** Publishes garden events to the bus with source `gardenless`. */
export class EventBridgeSink implements EventSink {
  private readonly client: EventBridgeClient;
  constructor(private readonly options: { busName: string; client?: EventBridgeClient }) {
    this.client = options.client ?? new EventBridgeClient({});
  }

  /** Builds the event through its schema (docs/events/), then puts it on the bus. */
  async publish(detailType: string, detail: Record<string, unknown>): Promise<void> {
    const built = buildEvent(detailType, detail);
    const res = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.options.busName,
            Source: EVENT_SOURCE,
            DetailType: detailType,
            Detail: JSON.stringify(built),
          },
        ],
      }),
    );
    if ((res.FailedEntryCount ?? 0) > 0) {
      const entry = res.Entries?.find((e) => e.ErrorCode);
      throw new Error(
        `event ${detailType} was not accepted by the bus: ${entry?.ErrorCode ?? 'unknown'} ${entry?.ErrorMessage ?? ''}`.trim(),
      );
    }
  }
}
