import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { promises as dns } from 'node:dns';
import { createServer } from 'node:net';

/** Debian's dnsmasq, when installed (scripts/setup.sh installs it); DNS-mode tests skip without it. */
export const DNSMASQ_PATH =
  spawnSync('sh', ['-c', 'command -v dnsmasq || ls /usr/sbin/dnsmasq'], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')[0] ?? '';

/** A port free for both UDP and TCP on 127.0.0.1 (dnsmasq listens on both). */
export async function freeDnsPort(): Promise<number> {
  for (;;) {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const udp = createSocket('udp4');
    const free = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    udp.close();
    server.close();
    await once(server, 'close');
    if (free) return port;
  }
}

export interface Dnsmasq {
  readonly port: number;
  /** Re-reads the hosts file (SIGHUP), as a zone's new answers become visible. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts dnsmasq in the foreground on 127.0.0.1:`port`, authoritative for `domain` (names without a record
 * are NXDOMAIN, never forwarded), answering A/AAAA from `hostsFile` and the given extra arguments; waits
 * until it answers.
 */
export async function startDnsmasq(options: {
  port: number;
  domain: string;
  hostsFile?: string;
  args?: readonly string[];
}): Promise<Dnsmasq> {
  const args = [
    '--no-daemon',
    `--port=${options.port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--no-resolv',
    '--no-hosts',
    '--conf-file=/dev/null',
    '--pid-file',
    `--local=/${options.domain}/`,
    // Answers from the hosts file are not cached by dnsmasq itself; clients see a reload at once.
    '--local-ttl=0',
    ...(options.hostsFile ? [`--addn-hosts=${options.hostsFile}`] : []),
    ...(options.args ?? []),
  ];
  const child: ChildProcess = spawn(DNSMASQ_PATH, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const resolver = new dns.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${options.port}`]);
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited with ${child.exitCode}: ${stderr}`);
    const answered = await resolver.resolve4(`ready-${i}.${options.domain}`).then(
      () => true,
      (error: NodeJS.ErrnoException) => error.code === 'ENOTFOUND' || error.code === 'ENODATA',
    );
    if (answered) {
      return {
        port: options.port,
        stop,
        reload: async () => {
          child.kill('SIGHUP');
          // dnsmasq re-reads the file at once; a short pause lets the signal be handled before the next query.
          await new Promise((r) => setTimeout(r, 100));
        },
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`dnsmasq did not answer on 127.0.0.1:${options.port}: ${stderr}`);
}
