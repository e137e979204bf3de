import type { Shoot } from '../model/shoot.js';
import {
  COMMAND_API_VERSION,
  seedCommandSchema,
  type CommandOf,
  type CommandType,
  type SeedCommand,
} from './schema.js';

/** The fields every command carries: what it is about, to whom it goes, and under which id. */
export interface CommandAddress {
  shoot: SeedCommand['shoot'];
  seed: string;
  commandId: string;
  issuedAt: Date;
  migrationId?: string;
  taskToken?: string;
  heartbeatSeconds?: number;
  timeoutSeconds?: number;
}

type Envelope =
  | 'apiVersion'
  | 'commandId'
  | 'shoot'
  | 'seed'
  | 'issuedAt'
  | 'migrationId'
  | 'taskToken'
  | 'heartbeatSeconds'
  | 'timeoutSeconds';
/** What a command of one type says beyond its envelope. */
export type CommandBody<T extends CommandType> = Omit<CommandOf<T>, Envelope>;

/**
 * The one way the garden builds a seed command (migration steps, provisioning, lifecycle, the dependency
 * watchdog): the envelope from the address, the body as given, checked against the protocol's schema so
 * that no component can send what an agent would refuse.
 */
export function buildCommand<T extends CommandType>(address: CommandAddress, body: CommandBody<T>): CommandOf<T> {
  return seedCommandSchema.parse({
    apiVersion: COMMAND_API_VERSION,
    commandId: address.commandId,
    shoot: address.shoot,
    seed: address.seed,
    issuedAt: address.issuedAt.toISOString(),
    ...(address.migrationId === undefined ? {} : { migrationId: address.migrationId }),
    ...(address.taskToken === undefined ? {} : { taskToken: address.taskToken }),
    ...(address.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: address.heartbeatSeconds }),
    ...(address.timeoutSeconds === undefined ? {} : { timeoutSeconds: address.timeoutSeconds }),
    ...body,
  }) as CommandOf<T>;
}

/** A shoot as commands name it. */
export function commandShoot(shoot: Pick<Shoot, 'metadata' | 'status'>): SeedCommand['shoot'] {
  return { project: shoot.metadata.project, name: shoot.metadata.name, technicalID: shoot.status.technicalID };
}
