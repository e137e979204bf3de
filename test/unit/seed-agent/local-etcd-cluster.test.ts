import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EtcdSpec } from '../../../seed/agent/hosting.js';
import { LocalEtcdCluster } from '../../../seed/agent/local-etcd-cluster.js';
import type { SidecarProcess } from '../../../seed/agent/sidecar-process.js';
import { ephemeralLow, plannedPorts } from '../../../seed/ports.js';

/** What the cluster needs of a started sidecar; no process runs. */
function idleSidecar(): SidecarProcess {
  return { running: true, exited: new Promise(() => {}), stop: async () => {} } as unknown as SidecarProcess;
}

describe('LocalEtcdCluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gl-etcd-cluster-'));
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives its members none of the ports the hosting planned elsewhere (this plane's kube-apiserver's among them)", async () => {
    // Prepare: the first port the planner would draw is one the hosting planned for a kube-apiserver that
    // has not bound it yet (it starts after etcd).
    const [apiServer] = await plannedPorts(1);
    const low = 20_000;
    const draw = (port: number) => (port - low + 0.5) / (ephemeralLow() - low);
    const random = Math.random;
    let draws = 0;
    vi.spyOn(Math, 'random').mockImplementation(() => (draws++ === 0 ? draw(apiServer!) : random()));
    const cluster = new LocalEtcdCluster({
      technicalID: 'shoot--dev--ha',
      dir,
      members: [0, 1, 2].map((ordinal) => ({ name: `etcd-main-${ordinal}`, ordinal })),
      defaults: {
        identity: 'seed-a',
        aws: { region: 'eu-west-1' },
        owner: { mode: 'api', hostedZoneId: 'Z1', internalDomain: 'internal.example' },
        sidecar: {},
      },
      plannedElsewhere: () => new Set([apiServer!]),
      launch: async () => idleSidecar(),
    });
    const spec = {
      shoot: { project: 'dev', name: 'ha', technicalID: 'shoot--dev--ha' },
      bucket: 'gl-backup-a',
    } as EtcdSpec;

    // Act
    await cluster.ensure(spec);

    // Assess: the drawn port was refused, and the members got nine distinct other ones.
    expect(draws).toBeGreaterThan(9);
    const ports = cluster.memberPorts();
    expect(new Set(ports).size).toBe(9);
    expect(ports).not.toContain(apiServer);
  });
});
