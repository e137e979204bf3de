import type { Command } from 'commander';
import type { HostedControlPlane } from '../core/model/seed.js';
import type { Api } from './api.js';
import type { OutputFormat } from './config.js';
import { serialize } from './output.js';
import { splitShoot } from './refs.js';
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
export function registerMembersCommand(shoot: Command, connect: () => Promise<Api>, output: () => OutputFormat): void {
  shoot
    .command('members <ref>')
    .description("show the etcd members of a shoot's control plane (<project>/<name>): zone, role, health")
    .action(async (ref: string) => {
      const [project, name] = splitShoot(ref);
      const layout = await (
        await connect()
      ).expect<LayoutAnswer>('GET', `/projects/${project}/shoots/${name}/controlplane`);
      const etcd = layout.etcd ?? { members: [] };
      const format = output();
      if (format === 'json' || format === 'yaml') console.log(await serialize(etcd, format));
      else if (format === 'name') console.log(etcd.members.map((m) => m.name).join('\n'));
      else console.log(memberRows(layout));
    });
}
