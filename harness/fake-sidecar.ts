import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { s3Api } from '../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../adapters/s3/snapshot-store.js';
import { ownerRecordName, type OwnerRecords } from '../core/ownership/index.js';
import { makeSnapshot, type SnapshotStore } from '../core/snapshots/index.js';
import type { Deployment } from '../local/deploy.js';
import { emulatorCredentials } from '../local/aws-env.js';

export interface FakeSidecarOptions {
  shoot: { project: string; name: string; technicalID: string };
  /** The identity of the seed this sidecar runs in: what the owner record names while it owns the shoot. */
  identity: string;
  /** The seed's backup bucket. */
  snapshots: SnapshotStore;
  ownerRecords: OwnerRecords;
  internalDomain: string;
  /** The last revision of the full snapshot written on start; the final one is one higher. Default 100. */
  revision?: number;
  /** How often the owner record is read. Default 250 ms. */
  intervalMs?: number;
  /**
   * React to a missing record only after the record has named this seed once. Default true: the garden
   * may not have written the record yet when the sidecar starts, and absence then is not a loss of
   * ownership. With false, any check that does not find this identity takes the final snapshot.
   */
  waitForOwnership?: boolean;
  /** Writes the owner record naming this seed on start when there is none (a test setup shortcut). */
  claim?: boolean;
  now?: () => Date;
}

export type FakeSidecarState = 'idle' | 'owner' | 'waiting' | 'final' | 'silenced';

/**
 * A stand-in for the backup-restore sidecar of one shoot on one seed, without etcd: writes one full
 * snapshot on start, watches the owner record (through the Route 53 API: the emulator serves no DNS),
 * and when the record stops naming its seed (deleted or changed) writes one final full snapshot at a
 * higher revision, exactly once. `silence()` is a sidecar that can no longer reach S3 (scenario S3).
 */
export class FakeSidecar {
  state: FakeSidecarState = 'idle';
  /** Keys written, in order. */
  readonly written: string[] = [];
  /** Owner lookups that failed (kept, not acted on: a real sidecar waits out its grace period). */
  readonly errors: Error[] = [];
  private readonly recordName: string;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private seenOwner = false;

  constructor(private readonly options: FakeSidecarOptions) {
    this.recordName = ownerRecordName({
      shoot: options.shoot.name,
      project: options.shoot.project,
      internalDomain: options.internalDomain,
    });
  }

  /** A sidecar on the deployed stack: S3 and Route 53 of the emulator, zone and domain from the stack outputs. */
  static onDeployment(
    deployment: Deployment,
    options: Omit<FakeSidecarOptions, 'snapshots' | 'ownerRecords' | 'internalDomain'> & { bucket: string },
  ): FakeSidecar {
    const aws = {
      endpoint: deployment.awsEndpoint,
      region: deployment.region,
      credentials: emulatorCredentials(),
    };
    const { bucket, ...rest } = options;
    return new FakeSidecar({
      ...rest,
      snapshots: new S3SnapshotStore({ bucket, api: s3Api(new S3Client({ ...aws, forcePathStyle: true })) }),
      ownerRecords: new Route53OwnerRecords({
        hostedZoneId: deployment.outputs.HostedZoneId,
        api: route53Api(new Route53Client(aws)),
      }),
      internalDomain: deployment.outputs.InternalDomain,
    });
  }

  get ownerRecord(): string {
    return this.recordName;
  }

  get revision(): number {
    return this.options.revision ?? 100;
  }

  /** The key of the final snapshot once written. */
  get finalKey(): string | undefined {
    return this.state === 'final' ? this.written.at(-1) : undefined;
  }

  /** Writes the full snapshot (and claims the record if asked), then watches the owner record. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    if (this.options.claim) {
      const current = await this.options.ownerRecords.get(this.recordName);
      if (current === undefined)
        await this.options.ownerRecords.set({ name: this.recordName, value: this.options.identity, expected: null });
    }
    await this.writeSnapshot(false);
    this.state = 'waiting';
    this.timer = setInterval(() => void this.check(), this.options.intervalMs ?? 250);
  }

  /** One owner check, as the timer runs it (exposed for tests that step the sidecar by hand). */
  check(): Promise<void> {
    // Never two checks at once: the final snapshot must be written exactly once.
    this.checking ??= this.checkOnce().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** Stops writing anything (S3 is gone for this sidecar) and stops watching. */
  silence(): void {
    this.state = 'silenced';
    this.stopTimer();
  }

  /** Stops watching; waits for a check in progress. */
  async stop(): Promise<void> {
    this.stopTimer();
    await this.checking;
  }

  private async checkOnce(): Promise<void> {
    if (this.state !== 'waiting' && this.state !== 'owner') return;
    let value: string | undefined;
    try {
      value = (await this.options.ownerRecords.get(this.recordName))?.value;
    } catch (error) {
      this.errors.push(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (value === this.options.identity) {
      this.seenOwner = true;
      this.state = 'owner';
      return;
    }
    if (!this.seenOwner && (this.options.waitForOwnership ?? true)) return;
    // Not the owner any more: the real sidecar fences first, then takes the final snapshot; nothing to fence here.
    if ((this.state as FakeSidecarState) === 'silenced') return;
    try {
      await this.writeSnapshot(true);
    } catch (error) {
      // The bucket failed: the next check tries again, as the real sidecar retries its final snapshot.
      this.errors.push(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.state = 'final';
    this.stopTimer();
  }

  private async writeSnapshot(final: boolean): Promise<void> {
    const snapshot = makeSnapshot({
      technicalID: this.options.shoot.technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: this.revision + (final ? 1 : 0),
      createdOn: Math.floor((this.options.now?.() ?? new Date()).getTime() / 1000),
      compressionSuffix: '',
      final,
    });
    const body = new TextEncoder().encode(
      JSON.stringify({
        fake: true,
        technicalID: this.options.shoot.technicalID,
        revision: snapshot.lastRevision,
        final,
        identity: this.options.identity,
      }),
    );
    await this.options.snapshots.put(snapshot.key, body);
    this.written.push(snapshot.key);
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
