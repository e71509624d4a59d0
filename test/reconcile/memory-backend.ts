/**
 * An in-memory backend: the reference implementation of the seam, used to test the core
 * (plan/apply order, refusals, the no-op guarantee) and to check the contract suite itself.
 */
import type { Backend, ChangeSet, DesiredEntry, OwnedEntry } from '../../src/reconcile/backend.js';
import type { BackendFixture } from './contract.js';

/** A stored object: ours carry a marker, foreign ones do not. */
export interface MemoryObject {
  name: string;
  marker?: { app: string; job: string; index: number; hash: string };
  body: string;
}

/** The memory backend plus what tests inspect. */
export interface MemoryBackend extends Backend {
  objects: Map<string, MemoryObject>;
  /** Every mutating call, in order: `delete <id>`, `put <id>`. */
  calls: string[];
  /** Make the next `apply` throw this. */
  failNext?: Error;
  /** Entries to refuse, by id → reason. */
  refusing: Map<string, string>;
}

/** Creates a memory backend seeded with `foreign` objects. */
export function memoryBackend(foreign: MemoryObject[] = []): MemoryBackend {
  const objects = new Map(foreign.map((o) => [o.name, { ...o }]));
  const calls: string[] = [];
  const backend: MemoryBackend = {
    name: 'crontab',
    target: 'memory',
    objects,
    calls,
    refusing: new Map(),
    refuse(entry: DesiredEntry): string[] {
      if (entry.spec.policy.concurrency === 'Enqueue') return ['Enqueue needs cronix serve'];
      const reason = backend.refusing.get(entry.id);
      return reason === undefined ? [] : [reason];
    },
    async list(app?: string): Promise<OwnedEntry[]> {
      const out: OwnedEntry[] = [];
      for (const o of objects.values()) {
        if (o.marker === undefined || (app !== undefined && o.marker.app !== app)) continue;
        out.push({
          id: o.name,
          app: o.marker.app,
          job: o.marker.job,
          scheduleIndex: o.marker.index,
          hash: o.marker.hash,
        });
      }
      return out;
    },
    async apply(changes: ChangeSet): Promise<void> {
      const failure = backend.failNext;
      if (failure !== undefined) {
        backend.failNext = undefined;
        throw failure;
      }
      for (const d of changes.deletes) {
        if (objects.get(d.id)?.marker === undefined) continue;
        objects.delete(d.id);
        calls.push(`delete ${d.id}`);
      }
      for (const e of [...changes.updates, ...changes.creates]) {
        const body = `${e.schedule} ${e.app}.${e.job}`;
        const marker = { app: e.app, job: e.job, index: e.scheduleIndex, hash: e.hash };
        const current = objects.get(e.id);
        if (current?.body === body && current.marker?.hash === e.hash) continue;
        objects.set(e.id, { name: e.id, marker, body });
        calls.push(`put ${e.id}`);
      }
    },
  };
  return backend;
}

const FOREIGN: MemoryObject[] = [
  { name: 'cronix-legacy', body: 'a foreign object with a name like ours' },
  { name: 'nightly-backup', body: '0 2 * * * backup' },
];

/** A contract fixture over a memory backend. */
export async function memoryFixture(): Promise<BackendFixture> {
  const backend = memoryBackend(FOREIGN);
  const dump = (): string =>
    JSON.stringify([...backend.objects.values()].sort((a, b) => (a.name < b.name ? -1 : 1)));
  return {
    backend,
    raw: async () => dump(),
    stamp: async () => String(backend.calls.length),
    assertForeignIntact: async () => {
      for (const f of FOREIGN) {
        const o = backend.objects.get(f.name);
        if (o === undefined || o.body !== f.body || o.marker !== undefined) {
          throw new Error(`foreign object ${f.name} was changed: ${JSON.stringify(o)}`);
        }
      }
    },
  };
}
