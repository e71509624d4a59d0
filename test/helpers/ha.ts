/**
 * Replicas of `cronix serve` in the test process, sharing a schema of the shared PostgreSQL
 * server: the HA tests' one way of starting them (a 3-s lease, no API token).
 */
import { join } from 'node:path';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { PG_URL, withSchema } from './pg.js';

/** Starts replica `replica` on `<dir>/m.json`, its data dir `<dir>/<replica>`, in `schema`. */
export function startReplica(
  dir: string,
  schema: string,
  replica: string,
  env: Record<string, string>,
): Promise<DaemonHandle> {
  return startDaemon({
    manifests: [join(dir, 'm.json')],
    dataDir: join(dir, replica),
    listen: '127.0.0.1:0',
    env,
    store: withSchema(PG_URL, schema),
    replicaId: replica,
    leaseSeconds: 3,
    noAuth: true,
  });
}

/** The replica's role as `GET /api/v1/cluster` reports it. */
export async function roleOf(d: DaemonHandle): Promise<string> {
  const view = (await (await fetch(`${d.url}/api/v1/cluster`)).json()) as {
    self: { role: string };
  };
  return view.self.role;
}
