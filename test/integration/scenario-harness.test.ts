import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { freeEtcdPorts } from '../../seed/ports.js';
import { EtcdSupervisor, restoreSnapshot, saveSnapshot, sleep } from '../../seed/backup-restore/index.js';
import { acknowledgedRate, checkNoAcknowledgedWriteLost, checkNoSplitBrain } from '../../harness/scenario/checks.js';
import { readEtcdContent } from '../../harness/scenario/etcd-client.js';
import { HistoryRecorder } from '../../harness/scenario/history.js';
import { checkHistory } from '../../harness/scenario/linearizability.js';
import { recordFinalReads, startRegisterClients } from '../../harness/scenario/register-clients.js';
import { startWriter, type SeedRole } from '../../harness/scenario/writer.js';

/**
 * The scenario writer, register clients and checks against two real etcds, without seeds: the writer
 * holds the required rate through the JSON gateway, follows a fence-then-activate switch, and the
 * split-brain check sees a source that still accepts writes after the destination took over. The
 * histories both record go through the linearizability checker: the switch (fence, copy, activate) is
 * linearizable, the split brain is not, and its visualization stays in test-results/linearizability/.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function etcd(label: string): Promise<EtcdSupervisor> {
  const dir = mkdtempSync(join(tmpdir(), `gl-scenario-${label}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const supervisor = new EtcdSupervisor({
    dataDir: join(dir, 'data'),
    ...(await freeEtcdPorts()),
    logFile: join(dir, 'etcd.log'),
  });
  cleanups.push(() => supervisor.stop());
  return supervisor;
}

/** The writer and four register clients (two trying the source first, two the destination) recording one history. */
function clients(endpoints: Record<SeedRole, string>, prefix: string) {
  const history = new HistoryRecorder();
  const keys = ['k0', 'k1', 'k2', 'k3'].map((k) => `${prefix}-registers/${k}`);
  const registers = startRegisterClients({
    history,
    endpoints,
    keys,
    clients: ['source', 'source', 'destination', 'destination'],
  });
  cleanups.push(() => registers.stop());
  return { history, registers };
}

describe('scenario harness on real etcd', () => {
  it('writes at >= 50/s, follows a fence-then-activate switch, and finds no split brain', async () => {
    // Prepare
    const [source, destination] = [await etcd('src'), await etcd('dst')];
    await source.ensure('public');
    const endpoints = { source: source.clientUrl('public'), destination: destination.clientUrl('public') };
    const { history, registers } = clients(endpoints, 'harness/switch');
    const writer = startWriter({ endpoints, prefix: 'harness/switch', history });
    cleanups.push(async () => void (await writer.stop()));
    await sleep(1_000);
    // Act: the source fences before the destination serves, as the sidecars guarantee, and the
    // destination starts from a snapshot of the fenced source, as a restore does.
    await source.fence();
    const snapshot = join(source.dataDir, '..', 'switch.db');
    await saveSnapshot({ endpoint: source.clientUrl('private'), file: snapshot });
    await restoreSnapshot({
      file: snapshot,
      dataDir: destination.dataDir,
      name: destination.name,
      peerUrl: destination.peerUrl,
    });
    await destination.ensure('public');
    await sleep(1_000);
    const record = await writer.stop();
    await registers.stop();
    await recordFinalReads({ history, seed: 'destination', endpoint: endpoints.destination });
    // Assess
    const bySeed = (seed: string) => record.acknowledged.filter((w) => w.seed === seed);
    const sourceAcks = bySeed('source');
    expect(acknowledgedRate(sourceAcks, record.startedAt, sourceAcks.at(-1)!.at)).toBeGreaterThanOrEqual(50);
    expect(bySeed('destination').length).toBeGreaterThan(20);
    const splitBrain = checkNoSplitBrain(record.acknowledged);
    expect(splitBrain.ok, splitBrain.summary).toBe(true);
    const onDestination = checkNoAcknowledgedWriteLost(
      bySeed('destination'),
      await readEtcdContent({ clientUrl: destination.clientUrl('public'), prefix: 'harness/' }),
    );
    expect(onDestination.ok, onDestination.summary).toBe(true);
    const onSource = checkNoAcknowledgedWriteLost(
      sourceAcks,
      await readEtcdContent({ clientUrl: source.clientUrl('private'), prefix: 'harness/' }),
    );
    expect(onSource.ok, onSource.summary).toBe(true);
    const verdict = await checkHistory('harness-switch', history);
    expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
    // The register clients read through both seeds (the final reads aside, which are the last client's).
    const ops = history.operations();
    const finalReader = ops.at(-1)!.client;
    const readsBy = (seed: SeedRole) =>
      ops.filter((o) => o.op === 'get' && o.seed === seed && o.outcome === 'ok' && o.client !== finalReader).length;
    expect(readsBy('source')).toBeGreaterThan(0);
    expect(readsBy('destination')).toBeGreaterThan(0);
  });

  it('sees split brain when the destination serves while the source still accepts writes', async () => {
    const [source, destination] = [await etcd('src'), await etcd('dst')];
    await source.ensure('public');
    const endpoints = { source: source.clientUrl('public'), destination: destination.clientUrl('public') };
    const { history, registers } = clients(endpoints, 'harness/both');
    const writer = startWriter({ endpoints, prefix: 'harness/both', probeIntervalMs: 50, history });
    cleanups.push(async () => void (await writer.stop()));
    await sleep(300);
    await destination.ensure('public'); // no fence first: both accept writes
    history.annotate('destination serves, source not fenced');
    await sleep(800);
    const record = await writer.stop();
    await registers.stop();
    await recordFinalReads({ history, seed: 'destination', endpoint: endpoints.destination });
    const report = checkNoSplitBrain(record.acknowledged);
    expect(report.ok).toBe(false);
    expect(report.sourceAcksAfter.length).toBeGreaterThan(0);
    expect(report.summary).toContain(report.sourceAcksAfter[0]!.key);
    // The independent checker rejects the history too, and leaves its visualization as an artifact.
    const verdict = await checkHistory('harness-split-brain', history);
    expect(verdict.result, JSON.stringify(verdict)).toBe('not-linearizable');
    expect(verdict.illegalKeyCount).toBeGreaterThan(0);
    expect(existsSync(verdict.visualization!)).toBe(true);
  });
});
