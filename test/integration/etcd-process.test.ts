import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdProcess } from '../../seed/backup-restore/etcd-process.js';
import { freePorts } from '../../seed/ports.js';
import { testMemberLaunch } from '../../harness/cluster/live-walk-landscape.js';
import { cleanup, tempDir } from './backup-restore-support.js';

/**
 * An etcd that cannot start says why in its own words, not only that it exited: a test's clean-up may
 * remove the log file before anyone reads it, and an operator reads the error first. Real etcd.
 */

afterAll(cleanup);

function listening(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('EtcdProcess.start', () => {
  it("rejects with etcd's own reason when its client port is taken", async () => {
    // Prepare: another process holds the client port etcd is told to serve on.
    const dir = tempDir('etcd-start');
    const [clientPort, peerPort] = await freePorts(2);
    const holder = await listening(clientPort!);
    try {
      const launch = testMemberLaunch(dir, {
        name: 'm0',
        clientUrl: `http://127.0.0.1:${clientPort}`,
        peerUrl: `http://127.0.0.1:${peerPort}`,
      });

      // Act and assert: the error carries etcd's critical line, and names the log.
      const started = EtcdProcess.start(launch, { timeoutMs: 15_000, readiness: 'healthy' });
      await expect(started).rejects.toThrow(/exited while starting \(code 1, signal null\): .*address already in use/);
      await expect(started).rejects.toThrow(launch.logFile!);
    } finally {
      holder.close();
    }
  });
});
