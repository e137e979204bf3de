import type { IWatchResponse } from 'etcd3';
import type { DeltaEvent } from './delta-format.js';

/** The events of one watch response in the delta format: a put keeps its lease (etcd's int64, decimal; none is 0). */
export function watchEvents(res: Pick<IWatchResponse, 'events'>): DeltaEvent[] {
  return res.events.map((e) =>
    e.type === 'Put'
      ? {
          type: 'put' as const,
          key: e.kv.key.toString('base64'),
          value: (e.kv.value ?? Buffer.alloc(0)).toString('base64'),
          revision: Number(e.kv.mod_revision),
          ...(e.kv.lease && e.kv.lease !== '0' ? { lease: String(e.kv.lease) } : {}),
        }
      : { type: 'delete' as const, key: e.kv.key.toString('base64'), revision: Number(e.kv.mod_revision) },
  );
}
