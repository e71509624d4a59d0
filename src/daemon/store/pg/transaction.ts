/**
 * One transaction of the PostgreSQL store (`../postgres.ts`) on a connection it was given:
 * `BEGIN`, the fence check when the store is fenced (a share lock on the lease row, the
 * holder, the epoch and the expiry on the database's clock; it also sets `cronix.epoch`,
 * which stamps the rows of `runs` written), the work, `COMMIT`; on an error `ROLLBACK`, and a
 * driver error is explained. The connection is released either way (as broken when the
 * rollback failed).
 */
import type pg from 'pg';
import { FencedError, type Fence } from '../coordination.js';
import { explainPgError, PgStoreError, type PgTarget } from './connect.js';

/**
 * Runs `work` in one transaction on `client`, after the fence check when `fence` is given;
 * a refused check calls `refuse` with the reason and throws {@link FencedError}.
 */
export async function inTransaction<T>(
  client: pg.PoolClient,
  target: PgTarget,
  fence: Fence | null,
  refuse: (reason: string) => void,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let broken = false;
  try {
    await client.query('BEGIN');
    if (fence) {
      // the check, and the epoch that stamps the rows this transaction writes (leader_epoch)
      const { rowCount } = await client.query(
        `SELECT set_config('cronix.epoch', epoch::text, true) FROM lease
         WHERE name = 'leader' AND holder = $1 AND epoch = $2 AND expires_at > now() FOR SHARE`,
        [fence.holder, fence.epoch],
      );
      if (rowCount !== 1) {
        const reason = `the lease is no longer held by ${fence.holder} at epoch ${fence.epoch}`;
        refuse(reason);
        throw new FencedError(reason);
      }
    }
    const out = await work(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    if (err instanceof FencedError) throw err;
    if (err instanceof Error && 'code' in err && typeof err.code === 'string')
      throw Object.assign(new PgStoreError(explainPgError(err, target)), { cause: err });
    throw err;
  } finally {
    client.release(broken);
  }
}
