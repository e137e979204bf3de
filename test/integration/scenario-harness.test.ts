import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../seed/ports.js';
import { EtcdSupervisor, sleep } from '../../seed/backup-restore/index.js';
import { acknowledgedRate, checkNoAcknowledgedWriteLost, checkNoSplitBrain } from '../harness/scenario/checks.js';
import { readEtcdContent } from '../harness/scenario/etcd-client.js';
import { startWriter } from '../harness/scenario/writer.js';

/**
 * The scenario writer and checks against two real etcds, without seeds: the writer holds the required
 * rate through the JSON gateway, follows a fence-then-activate switch, and the split-brain check sees
 * a source that still accepts writes after the destination took over.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function etcd(label: string): Promise<EtcdSupervisor> {
  const dir = mkdtempSync(join(tmpdir(), `gl-scenario-${label}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const supervisor = new EtcdSupervisor({ dataDir: join(dir, 'data'), clientPort: await freePort(), privatePort: await freePort(), peerPort: await freePort(), logFile: join(dir, 'etcd.log') });
  cleanups.push(() => supervisor.stop());
  return supervisor;
}

describe('scenario harness on real etcd', () => {
  it('writes at >= 50/s, follows a fence-then-activate switch, and finds no split brain', async () => {
    // Prepare
    const [source, destination] = [await etcd('src'), await etcd('dst')];
    await source.ensure('public');
    const writer = startWriter({ endpoints: { source: source.clientUrl('public'), destination: destination.clientUrl('public') }, prefix: 'harness/switch' });
    cleanups.push(async () => void (await writer.stop()));
    await sleep(1_000);
    // Act: the source fences before the destination serves, as the sidecars guarantee.
    await source.fence();
    await destination.ensure('public');
    await sleep(1_000);
    const record = await writer.stop();
    // Assess
    const bySeed = (seed: string) => record.acknowledged.filter((w) => w.seed === seed);
    const sourceAcks = bySeed('source');
    expect(acknowledgedRate(sourceAcks, record.startedAt, sourceAcks.at(-1)!.at)).toBeGreaterThanOrEqual(50);
    expect(bySeed('destination').length).toBeGreaterThan(20);
    const splitBrain = checkNoSplitBrain(record.acknowledged);
    expect(splitBrain.ok, splitBrain.summary).toBe(true);
    const onDestination = checkNoAcknowledgedWriteLost(bySeed('destination'), await readEtcdContent({ clientUrl: destination.clientUrl('public'), prefix: 'harness/' }));
    expect(onDestination.ok, onDestination.summary).toBe(true);
    const onSource = checkNoAcknowledgedWriteLost(sourceAcks, await readEtcdContent({ clientUrl: source.clientUrl('private'), prefix: 'harness/' }));
    expect(onSource.ok, onSource.summary).toBe(true);
  });

  it('sees split brain when the destination serves while the source still accepts writes', async () => {
    const [source, destination] = [await etcd('src'), await etcd('dst')];
    await source.ensure('public');
    const writer = startWriter({ endpoints: { source: source.clientUrl('public'), destination: destination.clientUrl('public') }, prefix: 'harness/both', probeIntervalMs: 50 });
    cleanups.push(async () => void (await writer.stop()));
    await sleep(300);
    await destination.ensure('public'); // no fence first: both accept writes
    await sleep(800);
    const record = await writer.stop();
    const report = checkNoSplitBrain(record.acknowledged);
    expect(report.ok).toBe(false);
    expect(report.sourceAcksAfter.length).toBeGreaterThan(0);
    expect(report.summary).toContain(report.sourceAcksAfter[0]!.key);
  });
});
