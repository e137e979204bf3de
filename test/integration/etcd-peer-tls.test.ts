import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newEtcdPeerCA } from '../../core/pki/shoot-secrets.js';
import { writeEtcdPeerFiles, writeSecretFile } from '../../seed/agent/secret-files.js';
import { memberAdd, memberList, memberRemove, put, range } from '../../seed/backup-restore/etcd-gateway.js';
import { EtcdProcess, type EtcdLaunch, type EtcdPeerTls } from '../../seed/backup-restore/etcd-process.js';
import { freePorts } from '../../seed/ports.js';
import { testMemberLaunch } from '../../harness/cluster/live-walk-landscape.js';
import { cleanup, tempDir } from './backup-restore-support.js';

/**
 * etcd's peer traffic is mutual TLS with the shoot's etcd peer CA (docs/design.md section 5, "The live
 * path"): a member added to the cluster joins only with a certificate from that CA. One whose certificate
 * is from another CA (though it trusts the shoot's, which is no secret), or one that speaks plain HTTP,
 * never becomes a started member, never learns a key, and the cluster goes on serving; a member with the
 * shoot's certificate joins the same cluster right after. Real etcd processes.
 */

const processes: EtcdProcess[] = [];
afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop({ timeoutMs: 5_000 })));
});
afterAll(cleanup);

describe("etcd's peers on the shoot's etcd peer CA", () => {
  it('admits a member only with a certificate from that CA, over TLS', async () => {
    // Prepare: a member of the shoot's cluster with its peer certificate, holding a key.
    const dir = tempDir('peer-tls');
    const peerCA = await newEtcdPeerCA(new Date());
    const [aClient, aPeer, ...ports] = await freePorts(8);
    const a = {
      name: 'etcd-a',
      clientUrl: `http://127.0.0.1:${aClient}`,
      peerUrl: `https://127.0.0.1:${aPeer}`,
    };
    const aTls = await peerFiles(dir, 'etcd-a', peerCA, a.peerUrl);
    processes.push(
      await EtcdProcess.start(launch(dir, a, { state: 'new', token: 'peer-tls', initialCluster: [a] }, aTls), {
        timeoutMs: 15_000,
        readiness: 'healthy',
      }),
    );
    await put(a.clientUrl, { key: '/secret', value: 'of the shoot' });
    const next = (scheme: 'http' | 'https', name: string) => ({
      name,
      clientUrl: `http://127.0.0.1:${ports.shift()!}`,
      peerUrl: `${scheme}://127.0.0.1:${ports.shift()!}`,
    });

    // A certificate from another CA for the right address, trusting the shoot's CA.
    const forged = next('https', 'etcd-forged');
    const otherCA = await newEtcdPeerCA(new Date());
    const forgedTls = await peerFiles(dir, forged.name, otherCA, forged.peerUrl);
    writeSecretFile(forgedTls.trustedCaFile, peerCA.certificate);
    // Plain HTTP, named in the cluster as such.
    const plain = next('http', 'etcd-plain');
    const rogues = [
      { member: forged, tls: forgedTls as EtcdPeerTls | undefined },
      { member: plain, tls: undefined },
    ];

    for (const rogue of rogues) {
      // Act: the cluster is told of the member (only a client of the shoot can), and it starts to join.
      const { added, members } = await memberAdd(a.clientUrl, { peerUrl: rogue.member.peerUrl, learner: true });
      const initialCluster = members.map((m) => ({
        name: m.id === added.id ? rogue.member.name : m.name,
        peerUrl: m.peerUrls[0]!,
      }));
      const started = await EtcdProcess.start(
        launch(dir, rogue.member, { state: 'existing', token: 'peer-tls', initialCluster }, rogue.tls),
        { timeoutMs: 5_000, readiness: 'listening' },
      ).catch((error: unknown) => error);
      if (started instanceof EtcdProcess) processes.push(started);
      await sleep(5_000);

      // Assess: it never published its name (it never talked raft with the cluster), it serves no key,
      // and the cluster is unharmed.
      const listed = await memberList(a.clientUrl);
      expect(listed.members.find((m) => m.id === added.id)?.name, rogue.member.name).toBe('');
      const read = await range(rogue.member.clientUrl, { key: '/secret', serializable: true }, 1_000).catch(
        () => undefined,
      );
      expect(read?.kvs ?? [], rogue.member.name).toEqual([]);
      expect((await range(a.clientUrl, { key: '/secret' })).kvs.map((kv) => kv.value)).toEqual(['of the shoot']);
      const log = readFileSync(join(dir, `${rogue.member.name}.log`), 'utf8');
      expect(log, rogue.member.name).toMatch(/certificate|tls|x509|could not retrieve cluster information/i);

      await memberRemove(a.clientUrl, added.id);
      if (started instanceof EtcdProcess) await started.stop({ timeoutMs: 5_000 });
    }

    // Act: a member with the shoot's peer certificate.
    const b = next('https', 'etcd-b');
    const bTls = await peerFiles(dir, b.name, peerCA, b.peerUrl);
    const { added, members } = await memberAdd(a.clientUrl, { peerUrl: b.peerUrl, learner: true });
    const initialCluster = members.map((m) => ({ name: m.id === added.id ? b.name : m.name, peerUrl: m.peerUrls[0]! }));
    processes.push(
      await EtcdProcess.start(launch(dir, b, { state: 'existing', token: 'peer-tls', initialCluster }, bTls), {
        timeoutMs: 15_000,
        readiness: 'listening',
      }),
    );

    // Assess: it joins and holds the key.
    await expect
      .poll(async () => (await memberList(a.clientUrl)).members.find((m) => m.id === added.id)?.name, {
        timeout: 15_000,
      })
      .toBe(b.name);
    await expect
      .poll(
        async () =>
          (await range(b.clientUrl, { key: '/secret', serializable: true }, 1_000).catch(() => undefined))?.kvs.map(
            (kv) => kv.value,
          ),
        { timeout: 15_000 },
      )
      .toEqual(['of the shoot']);
    expect((await memberList(a.clientUrl)).members.flatMap((m) => m.peerUrls)).toEqual(
      expect.arrayContaining([a.peerUrl, b.peerUrl]),
    );
  }, 90_000);
});

function launch(
  dir: string,
  m: { name: string; clientUrl: string; peerUrl: string },
  cluster: EtcdLaunch['cluster'],
  peerTls: EtcdPeerTls | undefined,
): EtcdLaunch {
  return testMemberLaunch(dir, m, { cluster, peerTls });
}

async function peerFiles(
  dir: string,
  member: string,
  ca: Awaited<ReturnType<typeof newEtcdPeerCA>>,
  peerUrl: string,
): Promise<EtcdPeerTls> {
  const files = await writeEtcdPeerFiles({
    dir: join(dir, 'pki', member),
    secrets: { etcdPeerCA: ca },
    member,
    peerUrls: [peerUrl],
  });
  return files!;
}
