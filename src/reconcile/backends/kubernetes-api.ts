/**
 * The few Kubernetes API calls the backend makes, through the official client
 * (`@kubernetes/client-node`), with a per-request timeout and errors mapped onto the backend
 * seam: a server that cannot be reached → {@link BackendUnreachableError}; refused writes,
 * RBAC denials and validation errors → {@link BackendWriteError} naming the object.
 */
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  Observable,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1ConfigMap,
  type V1CronJob,
} from '@kubernetes/client-node';
import { BackendConfigError, BackendUnreachableError, BackendWriteError } from '../backend.js';
import { NETWORK_ERROR_CODES } from './network-errors.js';

/** Kinds the backend manages. */
export type ManagedKind = 'CronJob' | 'ConfigMap';
/** An object of a managed kind. */
export type ManagedObject = V1CronJob | V1ConfigMap;

const NETWORK_CODES = NETWORK_ERROR_CODES;

function statusMessage(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return statusMessage(JSON.parse(body));
    } catch {
      return body.slice(0, 300);
    }
  }
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}

/** Typed access to CronJobs and ConfigMaps of one namespace. */
export class KubeObjects {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  /** The API server URL, for messages. */
  readonly server: string;

  constructor(
    kc: KubeConfig,
    /** The namespace every call addresses. */
    readonly namespace: string,
    private readonly timeoutMs: number,
  ) {
    this.batch = kc.makeApiClient(BatchV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.server = kc.getCurrentCluster()?.server ?? '(no cluster)';
  }

  /** Per-call options: abort the request when it takes longer than the timeout. */
  private options(): ConfigurationOptions<ObservableMiddleware> {
    const timeoutMs = this.timeoutMs;
    return {
      middleware: [
        {
          pre: (ctx) => {
            ctx.setSignal(AbortSignal.timeout(timeoutMs));
            return new Observable(Promise.resolve(ctx));
          },
          post: (res) => new Observable(Promise.resolve(res)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
  }

  /** Runs `call`, mapping failures onto the seam's errors; `allow` lists statuses returned as-is. */
  private async run<T>(
    what: string,
    call: () => Promise<T>,
    allow: number[] = [],
  ): Promise<T | number> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ApiException) {
        const code = err.code;
        if (allow.includes(code)) return code;
        const detail = statusMessage(err.body) || (code === 401 ? 'Unauthorized' : `HTTP ${code}`);
        if (code === 502 || code === 503 || code === 504) {
          throw new BackendUnreachableError(
            `Kubernetes API server ${this.server} is unavailable (${what}: ${detail})`,
          );
        }
        const hint =
          code === 401
            ? ' (check the credentials of the kubeconfig)'
            : code === 403
              ? ` (the account needs get/list/create/update/delete on cronjobs.batch and configmaps in namespace ${this.namespace})`
              : '';
        throw new BackendWriteError(`Kubernetes refused ${what}: ${detail}${hint}`);
      }
      const e = err as { name?: string; code?: string; type?: string; message?: string };
      if (e.message?.includes('skipTLSVerify')) {
        throw new BackendConfigError(
          `--kubeconfig: the cluster ${this.server} is plain HTTP; the client refuses it unless the kubeconfig sets insecure-skip-tls-verify: true`,
        );
      }
      if (
        e.name === 'AbortError' ||
        e.name === 'TimeoutError' ||
        e.type === 'system' ||
        e.type === 'aborted' ||
        (e.code !== undefined && NETWORK_CODES.has(e.code))
      ) {
        const why =
          e.name === 'AbortError' || e.type === 'aborted'
            ? `no answer within ${this.timeoutMs} ms`
            : (e.code ?? e.message);
        throw new BackendUnreachableError(
          `cannot reach the Kubernetes API server ${this.server} (${what}: ${why})`,
        );
      }
      throw err;
    }
  }

  /** Every object of `kind` matching `labelSelector`, following `continue` tokens. */
  async list(kind: ManagedKind, labelSelector: string): Promise<ManagedObject[]> {
    const out: ManagedObject[] = [];
    let cont: string | undefined;
    do {
      const req = { namespace: this.namespace, labelSelector, limit: 500, _continue: cont };
      const page = (await this.run(`listing ${kind}s in ${this.namespace}`, () =>
        kind === 'CronJob'
          ? this.batch.listNamespacedCronJob(req, this.options())
          : this.core.listNamespacedConfigMap(req, this.options()),
      )) as { items: ManagedObject[]; metadata?: { _continue?: string } };
      out.push(...page.items);
      cont = page.metadata?._continue || undefined;
    } while (cont !== undefined);
    return out;
  }

  /** The object, or null when it does not exist. */
  async get(kind: ManagedKind, name: string): Promise<ManagedObject | null> {
    const req = { name, namespace: this.namespace };
    const r = await this.run(
      `reading ${kind} ${this.namespace}/${name}`,
      () =>
        kind === 'CronJob'
          ? this.batch.readNamespacedCronJob(req, this.options())
          : this.core.readNamespacedConfigMap(req, this.options()),
      [404],
    );
    return typeof r === 'number' ? null : r;
  }

  /** Creates the object; returns the stored object, or 409 when the name is taken. */
  async create(kind: ManagedKind, body: ManagedObject): Promise<ManagedObject | 409> {
    const req = { namespace: this.namespace, body };
    const r = await this.run(
      `creating ${kind} ${this.namespace}/${body.metadata?.name}`,
      () =>
        kind === 'CronJob'
          ? this.batch.createNamespacedCronJob(
              req as { namespace: string; body: V1CronJob },
              this.options(),
            )
          : this.core.createNamespacedConfigMap(req, this.options()),
      [409],
    );
    return r === 409 ? 409 : (r as ManagedObject);
  }

  /** Replaces the object (optimistic concurrency through `metadata.resourceVersion`). */
  async replace(kind: ManagedKind, body: ManagedObject): Promise<ManagedObject> {
    const name = body.metadata?.name ?? '';
    const req = { name, namespace: this.namespace, body };
    const r = await this.run(
      `replacing ${kind} ${this.namespace}/${name}`,
      () =>
        kind === 'CronJob'
          ? this.batch.replaceNamespacedCronJob(
              req as { name: string; namespace: string; body: V1CronJob },
              this.options(),
            )
          : this.core.replaceNamespacedConfigMap(req, this.options()),
      [409],
    );
    if (r === 409) {
      throw new BackendWriteError(
        `${kind} ${this.namespace}/${name} was changed by someone else during apply; run apply again`,
      );
    }
    return r as ManagedObject;
  }

  /** Deletes the object (its Jobs and Pods in the background); a missing object is fine. */
  async delete(kind: ManagedKind, name: string): Promise<void> {
    const req = { name, namespace: this.namespace, propagationPolicy: 'Background' };
    await this.run(
      `deleting ${kind} ${this.namespace}/${name}`,
      () =>
        kind === 'CronJob'
          ? this.batch.deleteNamespacedCronJob(req, this.options())
          : this.core.deleteNamespacedConfigMap(req, this.options()),
      [404],
    );
  }
}
