import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { Etcd3 } from 'etcd3';
import type { AuditFinding, OwnershipAuditReport } from '../core/ownership/audit.js';
import { fixture } from './fixtures/index.js';

/**
 * Pieces the evacuation tests and `scripts/bench-evacuation.ts` share: small shoots placed on a seed,
 * keys written into their etcds and checked on the seed they moved to, and the controller's round.
 */

/** A `PUT` body: the fixture shoot on `seedName`, without tolerations and without HA (one etcd member). */
export function shootOn(seedName: string, name: string, annotations?: Record<string, string>): Record<string, unknown> {
  const shoot = fixture('shoot-dev-api1');
  shoot.metadata = { name, ...(annotations ? { annotations } : {}) };
  shoot.spec.seedName = seedName;
  delete shoot.spec.tolerations;
  delete shoot.spec.controlPlane;
  return shoot;
}

const key = (prefix: string, i: number) => `${prefix}key-${i}`;

/** Writes `count` keys `<prefix>key-<i>` with the values `v<i>`. */
export async function writeKeys(url: string, prefix: string, count: number): Promise<void> {
  const etcd = new Etcd3({ hosts: url });
  try {
    for (let i = 0; i < count; i++) await etcd.put(key(prefix, i)).value(`v${i}`);
  } finally {
    etcd.close();
  }
}

/** Whether the etcd at `url` answers every one of those keys with its value (false when it does not answer). */
export async function hasKeys(url: string, prefix: string, count: number): Promise<boolean> {
  const etcd = new Etcd3({ hosts: url, dialTimeout: 2_000 });
  try {
    const values = await etcd.getAll().prefix(prefix).strings();
    return Array.from({ length: count }, (_, i) => values[key(prefix, i)] === `v${i}`).every(Boolean);
  } catch {
    return false;
  } finally {
    etcd.close();
  }
}

/** One evacuation round, as the schedule or an event would run it: its summary, or the function's error. */
export async function evacuationRound(
  lambda: LambdaClient,
  functionName: string | undefined,
): Promise<{ body: Record<string, unknown>; error?: string }> {
  const res = await lambda.send(
    new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify({ round: true })) }),
  );
  const text = Buffer.from(res.Payload ?? new Uint8Array()).toString();
  const body = JSON.parse(text || '{}') as Record<string, unknown>;
  return res.FunctionError ? { body, error: `${res.FunctionError}: ${text.slice(0, 500)}` } : { body };
}

/**
 * One round of the ownership audit (its schedule is off in the test stack); the split-brain findings only:
 * more than one seed reporting a shoot's control plane active, or another seed than the placed one. The
 * other reasons are what a migration in flight looks like (the owner record moves before `seedName`).
 */
export async function splitBrainFindings(
  lambda: LambdaClient,
  functionName: string | undefined,
): Promise<AuditFinding[]> {
  const res = await lambda.send(new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from('{}') }));
  const text = Buffer.from(res.Payload ?? new Uint8Array()).toString();
  if (res.FunctionError) throw new Error(`the ownership audit failed: ${res.FunctionError}: ${text.slice(0, 500)}`);
  const report = JSON.parse(text) as OwnershipAuditReport;
  return report.findings.filter((f) => f.reason === 'ActiveOnSeveralSeeds' || f.reason === 'ActiveOnOtherSeed');
}
