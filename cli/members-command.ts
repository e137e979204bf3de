import type { Command } from 'commander';
import type { GardenClient } from '../adapters/http/garden-client.js';
import type { HostedControlPlane } from '../core/model/seed.js';
import { apiErrorLine } from './migration-view.js';
import { table } from './render.js';

type Member = NonNullable<HostedControlPlane['etcdMembers']>[number];

interface LayoutAnswer {
  seedName: string;
  etcd?: { leader?: string; members: Member[] };
}

/** The etcd members of a shoot as its seed's agent last reported them: zone, role, readiness, health. */
export function memberRows(layout: LayoutAnswer): string {
  const members = layout.etcd?.members ?? [];
  if (members.length === 0) return `seed ${layout.seedName} reports no etcd members (one etcd, or no report yet)`;
  return table(
    ['MEMBER', 'ZONE', 'ROLE', 'READY', 'HEALTHY', 'FENCED'],
    members.map((m) => [m.name, m.zone ?? '-', m.role, String(m.ready), String(m.healthy), String(m.fenced)]),
  );
}

/** `gardenless shoot members <project>/<name>`: the members of an HA shoot's etcd, added to the `shoot` command. */
export function registerMembersCommand(shoot: Command, clientFor: () => GardenClient, output: () => 'table' | 'json'): void {
  shoot
    .command('members <ref>')
    .description("show the etcd members of a shoot's control plane (<project>/<name>): zone, role, health")
    .action(async (ref: string) => {
      const [project, name, ...rest] = ref.split('/');
      if (!project || !name || rest.length > 0) throw new Error(`"${ref}" is not <project>/<name>`);
      const res = await clientFor().request<LayoutAnswer>('GET', `/projects/${project}/shoots/${name}/controlplane`);
      if (res.status !== 200) {
        console.error(output() === 'json' ? JSON.stringify(res.body, null, 2) : apiErrorLine(res.status, res.body));
        process.exitCode = 1;
        return;
      }
      console.log(output() === 'json' ? JSON.stringify(res.body.etcd ?? { members: [] }, null, 2) : memberRows(res.body));
    });
}
