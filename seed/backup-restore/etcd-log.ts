/**
 * Why an etcd stopped, in its own words. etcd 3.4 logs through capnslog by default
 * (`2026-12-06 08:56:41.253804 C | etcdmain: listen tcp 127.0.0.1:2379: bind: address already in use`)
 * and through zap with `--logger=zap` (one JSON object per line, `"level":"fatal"`). A start that fails
 * reports the last critical or error line, so that the error says why without its log file, which a
 * test's clean-up may already have removed.
 */

const CAPNSLOG = /^\S+ \S+ ([CEWNID]) \| (.*)$/;
const ZAP_SEVERE = new Set(['error', 'dpanic', 'panic', 'fatal']);

/** The last critical or error line of etcd's output, without its timestamp; undefined where there is none. */
export function etcdFailure(output: string): string | undefined {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const reason = severe(lines[i]!.trim());
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function severe(line: string): string | undefined {
  const capnslog = CAPNSLOG.exec(line);
  if (capnslog) return capnslog[1] === 'C' || capnslog[1] === 'E' ? capnslog[2] : undefined;
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (typeof entry.level !== 'string' || !ZAP_SEVERE.has(entry.level)) return undefined;
    const msg = typeof entry.msg === 'string' ? entry.msg : entry.level;
    return typeof entry.error === 'string' ? `${msg}: ${entry.error}` : msg;
  } catch {
    return undefined;
  }
}

/** The last `limit` characters written to it: enough of etcd's output to find why it stopped. */
export class OutputTail {
  private text = '';

  constructor(private readonly limit = 8_192) {}

  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-this.limit);
  }

  toString(): string {
    return this.text;
  }
}
