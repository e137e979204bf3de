/**
 * The fleet benchmark's bulk fill, past its first step: shoots placed by the garden's own scheduler and
 * placement write (`schedule`, then `createShoot`: the shoot and its count on the seed in one transaction),
 * their owner records written in Route 53 change batches of up to 500, and each agent handed its
 * `create-control-plane` commands on its own queue (SQS batches of 10), as operate-shoot would hand them,
 * without a task token to answer. The shoots are stored as their Create left them (Succeeded).
 *
 * Why not through the API: every creation there is an operate-shoot execution of several Lambda invocations,
 * and the emulator runs those on this two-core machine at a few a second (the first step measures it: the
 * `fill rate` in the results); 10,000 of them would take hours before anything is measured. What the
 * periodic jobs and the API then read (shoots, leases, reports, owner records, watchdog state) is what a
 * fleet filled through the API holds.
 */
import { ChangeResourceRecordSetsCommand, type Route53Client } from '@aws-sdk/client-route-53';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { buildCommand, commandShoot } from '../../core/commands/build.js';
import { SeedUnavailableError } from '../../core/garden/errors.js';
import { HEALTH_ONLY, listAllSeeds, placed } from '../../core/garden/placement.js';
import { attemptStarted, operationSucceeded } from '../../core/garden/shoot-operations.js';
import { newShoot } from '../../core/garden/shoot-resource.js';
import { parseInput } from '../../core/garden/validate.js';
import { shootInput, type Shoot } from '../../core/model/shoot.js';
import { DEFAULT_OWNER_RECORD_TTL_SECONDS, ownerRecordName } from '../../core/ownership/index.js';
import { indexSeeds, schedule } from '../../core/scheduling/index.js';
import { shootBody } from './load.js';

export async function bulkFill(options: {
  repo: DynamoGardenRepository;
  sqs: SQSClient;
  route53: Route53Client;
  hostedZoneId: string;
  internalDomain: string;
  /** Each seed's command queue and identity. */
  seeds: ReadonlyMap<string, { queueUrl: string; identity: string }>;
  project: string;
  names: readonly string[];
  onProgress?: (done: number) => void;
}): Promise<void> {
  let index = indexSeeds(await listAllSeeds(options.repo, HEALTH_ONLY));
  let sinceIndexed = 0;
  const created: Shoot[] = [];
  const limit = pLimit(16);
  await Promise.all(
    options.names.map((name) =>
      limit(async () => {
        const now = new Date();
        const shoot = newShoot(options.project, name, parseInput(shootInput, shootBody(name)), {
          now,
          uuid: `${options.project}-${name}`,
        });
        for (let attempt = 0; ; attempt++) {
          // The index is kept between decisions, as a scheduler keeps its cache, and read again every 50 placements.
          if (sinceIndexed >= 50) {
            sinceIndexed = 0;
            index = indexSeeds(await listAllSeeds(options.repo, HEALTH_ONLY));
          }
          const result = schedule({ shoot, seeds: index });
          if (!result.seedName) throw new Error(`no seed for ${name}: ${result.summary}`);
          const seedName = result.seedName;
          const done = operationSucceeded(
            attemptStarted(placed(shoot, seedName, result.summary, now), now),
            'created',
            now,
          );
          try {
            created.push(await options.repo.createShoot(done));
            sinceIndexed += 1;
            index.shoots[index.position(seedName)]! += 1;
            break;
          } catch (error) {
            if (!(error instanceof SeedUnavailableError) || attempt >= 5) throw error;
            sinceIndexed = 50;
          }
        }
        options.onProgress?.(created.length);
      }),
    ),
  );

  // Owner records: one change batch per 500 shoots (Route 53 takes up to 1,000 changes a batch).
  for (let i = 0; i < created.length; i += 500) {
    await options.route53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: options.hostedZoneId,
        ChangeBatch: {
          Comment: 'gardenless bench:fleet: owner records of the bulk fill',
          Changes: created.slice(i, i + 500).map((shoot) => ({
            Action: 'UPSERT',
            ResourceRecordSet: {
              Name: ownerRecordName({
                shoot: shoot.metadata.name,
                project: shoot.metadata.project,
                internalDomain: options.internalDomain,
              }),
              Type: 'TXT',
              TTL: DEFAULT_OWNER_RECORD_TTL_SECONDS,
              ResourceRecords: [{ Value: `"${options.seeds.get(shoot.status.seedName!)!.identity}"` }],
            },
          })),
        },
      }),
    );
  }

  // Each agent its commands, ten to a batch on its own queue.
  const bySeed = new Map<string, Shoot[]>();
  for (const shoot of created)
    bySeed.set(shoot.status.seedName!, [...(bySeed.get(shoot.status.seedName!) ?? []), shoot]);
  const send = pLimit(8);
  await Promise.all(
    [...bySeed].map(([seedName, shoots]) =>
      send(async () => {
        const { queueUrl } = options.seeds.get(seedName)!;
        for (let i = 0; i < shoots.length; i += 10) {
          const entries = shoots.slice(i, i + 10).map((shoot, k) => {
            const command = buildCommand<'create-control-plane'>(
              {
                shoot: commandShoot(shoot),
                seed: seedName,
                commandId: `bench-fill/${shoot.status.technicalID}`,
                issuedAt: new Date(),
              },
              {
                type: 'create-control-plane',
                controlPlane: { hibernated: false, backup: { bucket: `gl-backup-${seedName}`, region: 'eu-west-1' } },
              },
            );
            return {
              Id: String(k),
              MessageBody: JSON.stringify(command),
              MessageGroupId: shoot.status.technicalID,
              MessageDeduplicationId: createHash('sha256').update(command.commandId).digest('hex'),
            };
          });
          const res = await options.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
          if (res.Failed?.length) throw new Error(`commands to ${seedName}: ${JSON.stringify(res.Failed)}`);
        }
      }),
    ),
  );
}
