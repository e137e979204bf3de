import { KubernetesObjectApi, PatchStrategy, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { FIELD_MANAGER } from './objects.js';

/** A Kubernetes API call failed; `code` is the HTTP status (0 when the server was not reached). */
export class KubernetesApiError extends Error {
  constructor(
    message: string,
    readonly code: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'KubernetesApiError';
  }
}

export type ObjectRef = { apiVersion: string; kind: string; name: string; namespace?: string };

/**
 * The slice of the Kubernetes API the seed runtime uses, over @kubernetes/client-node's generic object
 * client: server-side apply (one field manager, forced: the agent owns its objects), JSON merge patch
 * for the watchdog's scale, reads, lists by label and deletes. 404 on read and delete is not an error.
 */
export class KubeObjects {
  private readonly api: KubernetesObjectApi;

  constructor(
    kubeConfig: KubeConfig,
    private readonly fieldManager = FIELD_MANAGER,
  ) {
    this.api = KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  /** Server-side apply; with `dryRun` the API server validates and admits but stores nothing. */
  async apply<T extends KubernetesObject>(object: T, options: { dryRun?: boolean } = {}): Promise<T> {
    return call(`apply ${describe(object)}`, () =>
      this.api.patch(
        object,
        undefined,
        options.dryRun ? 'All' : undefined,
        this.fieldManager,
        true,
        PatchStrategy.ServerSideApply,
      ),
    );
  }

  async mergePatch(ref: ObjectRef, patch: Record<string, unknown>): Promise<void> {
    const body = {
      ...patch,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: {
        ...((patch.metadata as object | undefined) ?? {}),
        name: ref.name,
        ...(ref.namespace ? { namespace: ref.namespace } : {}),
      },
    };
    await call(`patch ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, () =>
      this.api.patch(body, undefined, undefined, this.fieldManager, undefined, PatchStrategy.MergePatch),
    );
  }

  async read<T extends KubernetesObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await call(`read ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, () =>
        this.api.read<T>({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        }),
      );
    } catch (error) {
      if (error instanceof KubernetesApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  async list<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string } = {},
  ): Promise<T[]> {
    const items: T[] = [];
    let token: string | undefined;
    do {
      const page = await call(`list ${kind}`, () =>
        this.api.list<T>(
          apiVersion,
          kind,
          options.namespace,
          undefined,
          undefined,
          undefined,
          undefined,
          options.labelSelector,
          500,
          token,
        ),
      );
      items.push(...page.items);
      token = page.metadata?._continue || undefined;
    } while (token);
    return items;
  }

  /** Deletes (foreground for a namespace's dependents); false when it was not there. */
  async delete(ref: ObjectRef, options: { gracePeriodSeconds?: number } = {}): Promise<boolean> {
    try {
      await call(`delete ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, () =>
        this.api.delete(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
          },
          undefined,
          undefined,
          options.gracePeriodSeconds,
          undefined,
          'Background',
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof KubernetesApiError && error.code === 404) return false;
      throw error;
    }
  }
}

async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (cause) {
    const code = typeof (cause as { code?: unknown }).code === 'number' ? (cause as { code: number }).code : 0;
    const body = (cause as { body?: unknown }).body;
    const detail =
      typeof body === 'string'
        ? body
        : body
          ? JSON.stringify(body)
          : cause instanceof Error
            ? cause.message
            : String(cause);
    throw new KubernetesApiError(`${what}: ${code || 'no answer'} ${detail.slice(0, 500)}`, code, { cause });
  }
}

function describe(object: KubernetesObject): string {
  return `${object.kind} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata?.name}`;
}
