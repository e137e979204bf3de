import { buildCommand } from '../commands/build.js';
import type { SeedCommand } from '../commands/schema.js';
import { migrationCommandId } from '../commands/protocol.js';
import type { SealedSecrets } from '../shootstate/sealed.js';
import type { PackedShootState } from '../shootstate/types.js';
import { liveOwnerValue, type MigrationRecord } from './record.js';
import { stepDefinition, type MigrationStepId } from './steps.js';

/**
 * How often the destination's agent heartbeats a restore ahead. The state machine gives up on it after three
 * silent intervals (RestoreEtcdAhead's HeartbeatSeconds, 30 s): a destination that does not pick the command
 * up within that delays the migration by no more, and the flow goes on without the restore ahead.
 */
export const RESTORE_AHEAD_HEARTBEAT_SECONDS = 10;

/** SQS's message size limit: a command must fit, task token and all. */
export const MAX_COMMAND_BYTES = 256 * 1024;

export interface StepCommandOptions {
  record: MigrationRecord;
  step: MigrationStepId;
  now: Date;
  /** Usually injected by the state machine (`$$.Task.Token`) rather than passed here. */
  taskToken?: string;
  heartbeatSeconds?: number;
  timeoutSeconds?: number;
  /** The garden's state bucket (migrate: where large states go; restore: where to read them). */
  stateBucket: string;
  /** restore-extensions: the ShootState to restore from, and its version. */
  shootState?: { state: PackedShootState; version: number };
  /** restore-etcd and restore-etcd-ahead: the shoot's secrets sealed for the destination, for the components that start on the restored etcd. */
  secrets?: SealedSecrets;
  /** restore-etcd and restore-etcd-ahead: the shoot's API domain (its kube-apiserver's name). */
  apiDomain?: string;
  /** restore-etcd: the revision the copied snapshots must reach, and whether the copy holds the final snapshot (restore-etcd-ahead takes neither). */
  etcd?: { expectedLastRevision?: number; final: boolean };
  /**
   * restore-etcd-ahead's second round (`refresh`): the same command, sent again after a second pre-copy, so
   * that the destination brings its standby up to what the bucket holds now. Its own command id, so that
   * the agent's ledger does not answer it with the first round's answer.
   */
  round?: StepRound;
  /** survey-live: where the shoot's etcd serves on the source (its heartbeat's etcdClientUrl). */
  sourceEtcdUrls?: readonly string[];
}

/**
 * A round of a step beside its first, with a command id of its own: the restore ahead's second round
 * (`refresh`), the live walk's round after the source was lost (`source-lost`, which takes the walk's
 * way out instead of waiting for the source), and the two after the destination was lost, sent to the
 * source: `destination-lost` answers the way out while the record holds the live value, `walk-back` takes
 * it once the record names the source again.
 */
export const STEP_ROUNDS = ['refresh', 'source-lost', 'destination-lost', 'walk-back'] as const;
export type StepRound = (typeof STEP_ROUNDS)[number];

const ROUND_STEPS: Record<StepRound, MigrationStepId> = {
  refresh: 'restore-etcd-ahead',
  'source-lost': 'walk-live',
  'destination-lost': 'walk-live',
  'walk-back': 'walk-live',
};

/** The rounds of a walk whose destination was lost: the source takes them. */
const SOURCE_ROUNDS: readonly StepRound[] = ['destination-lost', 'walk-back'];
const toSourceRound = (round: StepRound | undefined) => round !== undefined && SOURCE_ROUNDS.includes(round);

export function assertRound(step: MigrationStepId, round: StepRound | undefined): void {
  if (round !== undefined && ROUND_STEPS[round] !== step) throw new RangeError(`step ${step} has no round ${round}`);
}

/**
 * The command a seed step sends, with the id every retry of the step shares (`<migrationId>/<step>`, and
 * `<migrationId>/<step>/<round>` for a round of its own, `StepRound`). Garden-only steps have no command
 * and are refused.
 */
export function commandForStep(options: StepCommandOptions): SeedCommand {
  const { record, step } = options;
  const definition = stepDefinition(step);
  if (definition.command === undefined) throw new RangeError(`step ${step} is done by the garden; it sends no command`);
  assertRound(step, options.round);
  const toSource = definition.actor === 'source' || toSourceRound(options.round);
  const seed = toSource ? record.source : record.destination;
  const address = {
    shoot: record.shoot,
    seed: seed.name,
    commandId: `${migrationCommandId({ migrationId: record.id, step })}${options.round === undefined ? '' : `/${options.round}`}`,
    issuedAt: options.now,
    migrationId: record.id,
    taskToken: options.taskToken,
    heartbeatSeconds: options.heartbeatSeconds,
    timeoutSeconds: options.timeoutSeconds,
  };
  switch (step) {
    case 'migrate-extensions':
      return buildCommand<'migrate'>(address, { type: 'migrate', stateBucket: options.stateBucket });
    case 'survey-live':
    case 'walk-live':
    case 'finish-live':
      return liveWalkCommand(options, address);
    case 'retire-source':
    case 'delete-source-control-plane':
      return buildCommand<'delete-control-plane'>(address, {
        type: 'delete-control-plane',
        keepBackups: true,
        keepExternalResources: true,
      });
    case 'restore-etcd-ahead':
    case 'restore-etcd': {
      const bucket = record.destination.backupBucket;
      if (bucket === undefined) throw new RangeError(`destination ${record.destination.name} has no backup bucket`);
      const tolerance = record.guards.failureTolerance;
      // Ahead: of what the pre-copy put there, while the source may still serve; so nothing to expect, nothing final.
      const etcd =
        step === 'restore-etcd-ahead'
          ? { bucket, final: false, ahead: true }
          : {
              bucket,
              final: options.etcd?.final ?? false,
              ...(options.etcd?.expectedLastRevision === undefined
                ? {}
                : { expectedLastRevision: options.etcd.expectedLastRevision }),
              // The operator resumed this migration with the override of the fidelity check.
              ...(record.overrides?.etcdDigestMismatch ? { acceptDigestMismatch: true } : {}),
            };
      return buildCommand<'restore'>(address, {
        type: 'restore',
        hibernated: record.guards.hibernated,
        // An HA shoot's etcd is restored as the cluster it was: the destination needs its failure tolerance.
        ...(tolerance
          ? { controlPlane: { hibernated: record.guards.hibernated, failureTolerance: tolerance, backup: { bucket } } }
          : {}),
        // Ahead too: the destination starts its kube-apiserver on the standby, so that serving costs it no cold start.
        ...(options.secrets ? { secrets: options.secrets } : {}),
        ...(options.apiDomain ? { apiDomain: options.apiDomain } : {}),
        etcd,
      });
    }
    case 'restore-extensions': {
      if (options.shootState === undefined)
        throw new RangeError('restore-extensions needs the ShootState to restore from');
      return buildCommand<'restore'>(address, {
        type: 'restore',
        hibernated: record.guards.hibernated,
        extensions: {
          // The garden's sealed secrets stay in the garden: the destination gets its own copy with restore-etcd.
          shootState: withoutSecrets(options.shootState.state),
          shootStateVersion: options.shootState.version,
          stateBucket: options.stateBucket,
        },
      });
    }
    default:
      throw new RangeError(`step ${step} has no command mapping`);
  }
}

/**
 * A round of the live walk. What the owner record holds at each is fixed by the flow (the source's identity
 * before own-live and once a lost destination's walk goes back, the live value until set-owner-destination,
 * the destination's after it), so the round is told it rather than reading it; the sidecars read the record
 * itself.
 */
function liveWalkCommand(options: StepCommandOptions, address: Parameters<typeof buildCommand>[0]): SeedCommand {
  const { record, step } = options;
  const source = record.source.identity;
  const destination = record.destination.identity;
  if (source === undefined || destination === undefined)
    throw new RangeError(
      `a live walk needs both seeds' identities (${record.source.name}, ${record.destination.name})`,
    );
  const bucket = record.destination.backupBucket;
  if (bucket === undefined) throw new RangeError(`destination ${record.destination.name} has no backup bucket`);
  // What the walk is of; the destination's load balancer, kept beside it, is the garden's to use.
  const spec = record.live && { cluster: record.live.cluster, sourceMembers: record.live.sourceMembers };
  if (step !== 'survey-live' && spec === undefined) throw new RangeError(`${step} needs the survey's answer`);
  const clientUrls = spec ? spec.sourceMembers.map((m) => m.clientUrl) : [...(options.sourceEtcdUrls ?? [])];
  if (clientUrls.length === 0) throw new RangeError(`the source ${record.source.name} reports no etcd address`);
  const owner =
    step === 'survey-live' || options.round === 'walk-back'
      ? source
      : step === 'walk-live'
        ? liveOwnerValue(record)!
        : destination;
  const lost = options.round === 'source-lost' ? 'source' : toSourceRound(options.round) ? 'destination' : undefined;
  return buildCommand<'live-walk'>(address, {
    type: 'live-walk',
    source: { identity: source, clientUrls },
    destination: { identity: destination },
    owner,
    ...(spec ? { spec } : {}),
    ...(lost ? { lost } : {}),
    ...(options.round === 'destination-lost' && record.live?.roundEndsAt
      ? { walkEndsBy: record.live.roundEndsAt }
      : {}),
    backup: { bucket },
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.apiDomain ? { apiDomain: options.apiDomain } : {}),
  });
}

function withoutSecrets(state: PackedShootState): PackedShootState {
  const { secrets: _garden, ...rest } = state;
  return rest;
}

/** The command's size as an SQS message body. */
export function commandBytes(command: SeedCommand): number {
  return Buffer.byteLength(JSON.stringify(command));
}
