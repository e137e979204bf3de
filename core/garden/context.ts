/** What the garden logic needs from its surroundings besides storage, injected so that tests control it. */
export interface Clock {
  now(): Date;
}

export interface IdSource {
  uuid(): string;
}

/** Events on the bus (source `gardenless`); detail types are the names DESIGN section 5 lists. */
export interface EventSink {
  publish(detailType: string, detail: Record<string, unknown>): Promise<void>;
}

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdSource = { uuid: () => crypto.randomUUID() };
export const discardEvents: EventSink = { publish: async () => {} };
