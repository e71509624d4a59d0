/**
 * A local HTTP server that plays the Kubernetes API server for the paths the cronix
 * Kubernetes backend uses, with the official client on the other side:
 *
 *   /apis/batch/v1/namespaces/{ns}/cronjobs[/{name}]   GET (list with labelSelector), POST, PUT, DELETE
 *   /api/v1/namespaces/{ns}/configmaps[/{name}]        same
 *
 * Objects live in memory; every request is recorded (method, path, query, body). Semantics
 * follow the real server where the backend depends on them: bearer-token auth (401), 404 Status
 * for missing objects, 409 AlreadyExists on create, 409 Conflict on a stale resourceVersion,
 * server-set uid / resourceVersion / creationTimestamp, and bodies validated against the
 * Kubernetes OpenAPI schema (kubernetes-models), answered 422 Invalid like the API server.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';

/** One request as the fake saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}

/** A stored object (JSON as the server would return it). */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

type Resource = 'cronjobs' | 'configmaps';
const KINDS: Record<Resource, { kind: string; apiVersion: string; validate(o: unknown): void }> = {
  cronjobs: {
    kind: 'CronJob',
    apiVersion: 'batch/v1',
    validate: (o) => new CronJob(o as ConstructorParameters<typeof CronJob>[0]).validate(),
  },
  configmaps: {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    validate: (o) => new ConfigMap(o as ConstructorParameters<typeof ConfigMap>[0]).validate(),
  },
};

const ROUTE =
  /^\/(?:apis\/batch\/v1|api\/v1)\/namespaces\/([a-z0-9-]+)\/(cronjobs|configmaps)(?:\/([a-z0-9.-]+))?$/;

/** Whether `labels` satisfy a label selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma = AND). */
export function matchesSelector(labels: Record<string, string> = {}, selector = ''): boolean {
  return selector
    .split(',')
    .filter((s) => s !== '')
    .every((req) => {
      const ne = /^([^!=]+)!=(.*)$/.exec(req);
      if (ne) return labels[ne[1] as string] !== ne[2];
      const eq = /^([^!=]+)==?(.*)$/.exec(req);
      if (eq) return labels[eq[1] as string] === eq[2];
      if (req.startsWith('!')) return !(req.slice(1) in labels);
      return req in labels;
    });
}

/** The fake API server. */
export class FakeKube {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  /** Objects by `<resource>/<namespace>/<name>`. */
  readonly objects = new Map<string, KubeObject>();
  /** Drop `spec.timeZone` from stored CronJobs, like Kubernetes < 1.27 without the feature gate. */
  dropTimeZone = false;
  private version = 100;

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>` */
    readonly url: string,
    /** The bearer token requests must carry. */
    readonly token: string,
  ) {}

  /** Starts a fake on an ephemeral loopback port. */
  static async start(token = 'fake-token'): Promise<FakeKube> {
    const holder: { fake?: FakeKube } = {};
    const server = createServer((req, res) => void holder.fake?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    holder.fake = new FakeKube(server, `http://127.0.0.1:${port}`, token);
    return holder.fake;
  }

  /** Stops the server. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Writes a kubeconfig for this server (plain http, bearer token) and returns its path. */
  writeKubeconfig(dir: string, namespace?: string): string {
    const path = join(dir, 'kubeconfig.yaml');
    const ns = namespace !== undefined ? `\n    namespace: ${namespace}` : '';
    writeFileSync(
      path,
      `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${this.url}
    insecure-skip-tls-verify: true
users:
- name: tester
  user:
    token: ${this.token}
contexts:
- name: fake
  context:
    cluster: fake
    user: tester${ns}
current-context: fake
`,
    );
    return path;
  }

  /** Stores an object directly (seeding), as if created through the API. */
  seed(resource: Resource, namespace: string, object: KubeObject): KubeObject {
    const stored = this.stamp(resource, namespace, structuredClone(object), undefined);
    this.objects.set(`${resource}/${namespace}/${object.metadata.name}`, stored);
    return stored;
  }

  /** A stored object, or undefined. */
  get(resource: Resource, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(`${resource}/${namespace}/${name}`);
  }

  /** Recorded requests that change state (POST, PUT, PATCH, DELETE). */
  writes(): RecordedRequest[] {
    return this.requests.filter((r) => r.method !== 'GET');
  }

  /** All stored objects as stable JSON (sorted by key), for "nothing changed" comparisons. */
  dump(): string {
    return JSON.stringify([...this.objects.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  private stamp(resource: Resource, ns: string, body: KubeObject, prev?: KubeObject): KubeObject {
    const { kind, apiVersion } = KINDS[resource];
    this.version += 1;
    const metadata = {
      ...body.metadata,
      namespace: ns,
      uid: (prev?.metadata['uid'] as string | undefined) ?? randomUUID(),
      resourceVersion: String(this.version),
      creationTimestamp:
        prev?.metadata['creationTimestamp'] ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const out: KubeObject = { ...body, apiVersion, kind, metadata };
    if (this.dropTimeZone && resource === 'cronjobs') {
      delete (out['spec'] as Record<string, unknown> | undefined)?.['timeZone'];
    }
    return out;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const method = req.method ?? 'GET';
    this.requests.push({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(body !== undefined ? { body } : {}),
    });
    const send = (code: number, payload: unknown): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const status = (code: number, reason: string, message: string): void =>
      send(code, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason,
        code,
      });

    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return status(401, 'Unauthorized', 'Unauthorized');
    }
    const m = ROUTE.exec(url.pathname);
    if (!m) return status(404, 'NotFound', `the server could not find the requested resource`);
    const [, ns, resource, name] = m as unknown as [string, string, Resource, string | undefined];
    const { kind, apiVersion } = KINDS[resource];
    const key = (n: string): string => `${resource}/${ns}/${n}`;

    if (name === undefined && method === 'GET') {
      const selector = url.searchParams.get('labelSelector') ?? '';
      const items = [...this.objects.entries()]
        .filter(
          ([k, o]) =>
            k.startsWith(`${resource}/${ns}/`) && matchesSelector(o.metadata.labels, selector),
        )
        .map(([, o]) => o);
      return send(200, {
        apiVersion,
        kind: `${kind}List`,
        metadata: { resourceVersion: String(this.version) },
        items,
      });
    }
    if (name === undefined && method === 'POST') {
      const obj = body as KubeObject;
      const problem = this.invalid(resource, obj, ns);
      if (problem) return status(422, 'Invalid', problem);
      if (this.objects.has(key(obj.metadata.name))) {
        return status(409, 'AlreadyExists', `${resource} "${obj.metadata.name}" already exists`);
      }
      const stored = this.stamp(resource, ns, obj);
      this.objects.set(key(obj.metadata.name), stored);
      return send(201, stored);
    }
    if (name === undefined) return status(405, 'MethodNotAllowed', `${method} not allowed`);
    const current = this.objects.get(key(name));
    if (method === 'GET') {
      return current
        ? send(200, current)
        : status(404, 'NotFound', `${resource} "${name}" not found`);
    }
    if (method === 'PUT') {
      const obj = body as KubeObject;
      if (!current) return status(404, 'NotFound', `${resource} "${name}" not found`);
      if (obj?.metadata?.name !== name)
        return status(
          400,
          'BadRequest',
          'the name of the object does not match the name on the URL',
        );
      const problem = this.invalid(resource, obj, ns);
      if (problem) return status(422, 'Invalid', problem);
      const rv = obj.metadata['resourceVersion'];
      if (rv !== undefined && rv !== current.metadata['resourceVersion']) {
        return status(
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified`,
        );
      }
      const stored = this.stamp(resource, ns, obj, current);
      this.objects.set(key(name), stored);
      return send(200, stored);
    }
    if (method === 'DELETE') {
      if (!current) return status(404, 'NotFound', `${resource} "${name}" not found`);
      this.objects.delete(key(name));
      return send(200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, kind: resource },
      });
    }
    return status(405, 'MethodNotAllowed', `${method} not allowed`);
  }

  private invalid(resource: Resource, obj: KubeObject | undefined, ns: string): string | null {
    if (!obj?.metadata?.name) return 'metadata.name: Required value';
    if (obj.metadata.namespace !== undefined && obj.metadata.namespace !== ns) {
      return 'the namespace of the provided object does not match the namespace sent on the request';
    }
    try {
      KINDS[resource].validate(obj);
    } catch (err) {
      return `${KINDS[resource].kind} is invalid: ${(err as Error).message}`;
    }
    if (resource === 'cronjobs' && obj.metadata.name.length > 52) {
      return `CronJob.batch "${obj.metadata.name}" is invalid: metadata.name: must be no more than 52 characters`;
    }
    return null;
  }
}

/** A valid CronJob that is not ours (or, with a marker, ours in another namespace). */
export function foreignCronJob(name: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, labels },
    spec: {
      schedule: '0 1 * * *',
      jobTemplate: {
        spec: {
          template: {
            spec: {
              restartPolicy: 'OnFailure',
              containers: [{ name: 'backup', image: 'busybox' }],
            },
          },
        },
      },
    },
  };
}
