import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { epochNow } from './history.js';

/**
 * A steady writer through a shoot's kubeconfig, as a user's client writes: kube-apiserver behind the API
 * domain (the landscape's proxy and the seed's load balancer), @kubernetes/client-node with its own
 * connection handling and reconnects. Each write creates a ConfigMap of its own (`w-<sequence>`), so a
 * write that timed out here and was applied later changes nothing the check reads: after the run every
 * acknowledged ConfigMap must exist.
 */

export interface KubeAck {
  readonly name: string;
  /** Epoch ms (sub-ms precision), as the etcd writers record them. */
  readonly sentAt: number;
  readonly at: number;
  readonly resourceVersion: string;
}

export interface KubeWriterRecord {
  readonly namespace: string;
  readonly startedAt: number;
  /** In acknowledgement order. */
  readonly acknowledged: readonly KubeAck[];
  /** Writes that got an error or no answer within the timeout. */
  readonly failed: number;
  /** The last error, for a run that shows no acknowledgement. */
  readonly lastError: string | undefined;
  /** The first failures (epoch ms of the failure, its error), for a trace of where a window came from. */
  readonly failures: readonly { readonly sentAt: number; readonly at: number; readonly error: string }[];
}

/** Failures kept per writer: a window of several seconds at 40 writes a second, with room to spare. */
const KEPT_FAILURES = 2_000;

export interface KubeWriterOptions {
  /** The kubeconfig as the garden issued it (YAML). */
  readonly kubeconfig: string;
  /** Made by the writer before it starts writing. */
  readonly namespace: string;
  /** All loops together; default 40. */
  readonly writesPerSecond?: number;
  /** Loops with one write in flight each; default 4. */
  readonly loops?: number;
  /** A write not answered within this counts as failed (it may still be applied); default 1 s. */
  readonly timeoutMs?: number;
}

export interface KubeWriter {
  record(): KubeWriterRecord;
  stop(): Promise<KubeWriterRecord>;
}

function apiOf(kubeconfig: string): CoreV1Api {
  const config = new KubeConfig();
  config.loadFromString(kubeconfig);
  return config.makeApiClient(CoreV1Api);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  // The request goes on in the background: its late answer is ignored, its ConfigMap is nobody else's.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const messageOf = (error: unknown) =>
  error instanceof Error ? error.message.split('\n')[0]!.slice(0, 300) : String(error).slice(0, 300);

/** Creates the namespace (retrying until kube-apiserver answers, at most `timeoutMs`), then starts the loops. */
export async function startKubeWriter(options: KubeWriterOptions, readyTimeoutMs = 60_000): Promise<KubeWriter> {
  const api = apiOf(options.kubeconfig);
  const timeoutMs = options.timeoutMs ?? 1_000;
  const loops = options.loops ?? 4;
  const intervalMs = (1_000 * loops) / (options.writesPerSecond ?? 40);
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    try {
      await withTimeout(api.createNamespace({ body: { metadata: { name: options.namespace } } }), timeoutMs * 5);
      break;
    } catch (error) {
      if ((error as { code?: number }).code === 409) break;
      if (Date.now() > deadline) throw new Error(`namespace ${options.namespace}: ${messageOf(error)}`);
      await sleep(500);
    }
  }
  const acknowledged: KubeAck[] = [];
  let failed = 0;
  let lastError: string | undefined;
  const failures: { sentAt: number; at: number; error: string }[] = [];
  let sequence = 0;
  let running = true;
  const stopping = new AbortController();
  const pause = (ms: number) =>
    ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined) : Promise.resolve();
  const startedAt = epochNow();
  const loop = async () => {
    while (running) {
      const slotEnd = epochNow() + intervalMs;
      const name = `w-${String(sequence++).padStart(7, '0')}`;
      const sentAt = epochNow();
      try {
        const created = await withTimeout(
          api.createNamespacedConfigMap({
            namespace: options.namespace,
            body: { metadata: { name }, data: { sentAt: String(sentAt) } },
          }),
          timeoutMs,
        );
        acknowledged.push({ name, sentAt, at: epochNow(), resourceVersion: created.metadata?.resourceVersion ?? '' });
      } catch (error) {
        failed += 1;
        lastError = messageOf(error);
        if (failures.length < KEPT_FAILURES) failures.push({ sentAt, at: epochNow(), error: lastError });
        await pause(20);
      }
      await pause(slotEnd - epochNow());
    }
  };
  const done = Promise.all(Array.from({ length: loops }, loop));
  const record = (): KubeWriterRecord => ({
    namespace: options.namespace,
    startedAt,
    acknowledged: [...acknowledged].sort((a, b) => a.at - b.at),
    failed,
    lastError,
    failures: [...failures],
  });
  return {
    record,
    async stop() {
      running = false;
      stopping.abort();
      await done;
      return record();
    },
  };
}

/**
 * The acknowledged ConfigMaps that `kubeconfig`'s cluster does not hold (an empty list: nothing lost). A
 * connection that fails is tried again, for up to two minutes: after a bad path, a resolver may still
 * answer the fenced source's address for what is left of the old TTL.
 */
export async function missingKubeWrites(
  kubeconfig: string,
  record: KubeWriterRecord,
  attempts = 60,
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await listMissing(kubeconfig, record);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await sleep(2_000);
    }
  }
}

async function listMissing(kubeconfig: string, record: KubeWriterRecord): Promise<string[]> {
  const api = apiOf(kubeconfig);
  const names = new Set<string>();
  let next: string | undefined;
  do {
    const page = await api.listNamespacedConfigMap({ namespace: record.namespace, limit: 500, _continue: next });
    for (const item of page.items) if (item.metadata?.name) names.add(item.metadata.name);
    next = page.metadata?._continue || undefined;
  } while (next);
  return record.acknowledged.filter((a) => !names.has(a.name)).map((a) => a.name);
}
