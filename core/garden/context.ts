/** What the garden logic needs from its surroundings besides storage, injected so that tests control it. */
export interface Clock {
  now(): Date;
}

export interface IdSource {
  uuid(): string;
}

/** Events on the bus (source `gardenless`); detail types are the names docs/design.md section 5 lists. */
export interface EventSink {
  publish(detailType: string, detail: Record<string, unknown>): Promise<void>;
}

/**
 * What a seed needs outside the garden state: its command queue (garden -> seed). Provisioned before
 * the seed is stored, so that a stored seed always has a queue; idempotent, so a retry is harmless.
 */
export interface SeedProvisioner {
  provision(seedName: string): Promise<{ commandQueueUrl: string }>;
  deprovision(seedName: string): Promise<void>;
}

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdSource = { uuid: () => crypto.randomUUID() };
export const discardEvents: EventSink = { publish: async () => {} };
export const noProvisioning: SeedProvisioner = {
  provision: async () => ({ commandQueueUrl: '' }),
  deprovision: async () => {},
};
