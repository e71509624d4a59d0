/**
 * The access part of the store contract (SPEC §18), run by every store through
 * `store-contract.ts`: named tokens by hash and name (revocation, re-use of a revoked name, the
 * file token's row), the audit log with its filters, paging and retention, and begun logins that
 * are taken at most once, also by two writers at once.
 */
import { expect, it } from 'vitest';
import type { NewAuditRecord, Store, TokenRecord } from '../../src/daemon/store/types.js';
import { T0 } from './store-fixtures.js';

const token = (name: string, over: Partial<TokenRecord> = {}): TokenRecord => ({
  name,
  kind: 'stored',
  hash: `${name}-hash`.padEnd(64, '0'),
  role: 'operator',
  apps: ['billing', 'shop'],
  createdAt: T0,
  createdBy: 'default',
  expiresAt: T0 + 86_400_000,
  revokedAt: null,
  ...over,
});

const audit = (n: number, over: Partial<NewAuditRecord> = {}): NewAuditRecord => ({
  at: T0 + n * 1000,
  who: 'ci',
  whoKind: 'token',
  role: 'operator',
  action: 'trigger',
  app: 'billing',
  job: 'settle',
  run: `run-${n}`,
  source: 'api',
  address: '127.0.0.1',
  replica: null,
  forwarded: false,
  result: 'ok',
  status: 202,
  detail: null,
  ...over,
});

/** Registers the tests; `store` is the migrated store of the current test. */
export function accessContract(store: () => Store, another: () => Store): void {
  it('tokens: created once by name, found by hash and name, listed, revoked for good', async () => {
    const s = store();
    expect(await s.createToken(token('ci'))).toBe('created');
    expect(await s.createToken(token('ci', { hash: 'f'.repeat(64) }))).toBe('exists');
    expect(await s.tokenByHash(token('ci').hash!)).toEqual(token('ci'));
    expect(await s.tokenByName('ci')).toEqual(token('ci'));
    expect(await s.tokenByHash('0'.repeat(64))).toBeNull();
    await s.createToken(token('alpha', { apps: [], expiresAt: null, role: 'viewer' }));
    expect((await s.listTokens()).map((t) => [t.name, t.role, t.apps])).toEqual([
      ['alpha', 'viewer', []],
      ['ci', 'operator', ['billing', 'shop']],
    ]);
    expect(await s.revokeToken('ci', T0 + 5)).toBe(true);
    expect(await s.revokeToken('ci', T0 + 6)).toBe(false);
    expect(await s.revokeToken('nobody', T0 + 6)).toBe(false);
    expect((await s.tokenByHash(token('ci').hash!))?.revokedAt).toBe(T0 + 5);
    // a revoked name may be given to a new token; the old value stays dead
    const again = token('ci', { hash: 'e'.repeat(64), role: 'viewer' });
    expect(await s.createToken(again)).toBe('created');
    expect(await s.tokenByName('ci')).toEqual(again);
    expect(await s.tokenByHash(token('ci').hash!)).toBeNull();
  });

  it('tokens: the file token row is made once, has no hash, and its name cannot be taken', async () => {
    const s = store();
    await s.ensureFileToken('default', T0);
    await s.ensureFileToken('default', T0 + 1);
    expect(await s.tokenByName('default')).toEqual({
      name: 'default',
      kind: 'file',
      hash: null,
      role: 'admin',
      apps: [],
      createdAt: T0,
      createdBy: null,
      expiresAt: null,
      revokedAt: null,
    });
    expect(await s.createToken(token('default'))).toBe('exists');
    expect(await s.revokeToken('default', T0 + 2)).toBe(true);
    // revoked, it stays revoked: neither a restart nor a create brings it back
    await s.ensureFileToken('default', T0 + 3);
    expect(await s.createToken(token('default'))).toBe('exists');
    expect((await s.tokenByName('default'))?.revokedAt).toBe(T0 + 2);
  });

  it('audit: appended in order, newest first, filtered, paged and pruned by age', async () => {
    const s = store();
    const rows = [];
    for (let n = 0; n < 5; n++)
      rows.push(await s.appendAudit(audit(n, n === 3 ? { who: 'alice', whoKind: 'user' } : {})));
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.seq).toBeGreaterThan(rows[i - 1]!.seq);
    const all = await s.listAudit({});
    expect(all.map((r) => r.run)).toEqual(['run-4', 'run-3', 'run-2', 'run-1', 'run-0']);
    expect(all[1]).toEqual(rows[3]);
    expect((await s.listAudit({ who: 'alice' })).map((r) => r.run)).toEqual(['run-3']);
    expect(await s.listAudit({ action: 'pause' })).toEqual([]);
    expect((await s.listAudit({ since: T0 + 3000 })).map((r) => r.run)).toEqual(['run-4', 'run-3']);
    const page = await s.listAudit({ limit: 2, beforeSeq: rows[3]!.seq });
    expect(page.map((r) => r.run)).toEqual(['run-2', 'run-1']);
    const forwarded = await s.appendAudit(
      audit(9, { forwarded: true, replica: 'b', result: 'refused', status: 403, app: null }),
    );
    expect((await s.listAudit({ limit: 1 }))[0]).toEqual(forwarded);
    expect(await s.pruneAudit(T0 + 2000)).toBe(2);
    expect(await s.listAudit({})).toHaveLength(4);
  });

  it('logins: a state is taken once, by one of two writers racing for it, and not after it expired', async () => {
    const s = store();
    const other = another();
    await other.migrate();
    try {
      const login = { state: 's1', verifier: 'v1', nonce: 'n1', expiresAt: T0 + 600_000 };
      await s.putLoginState(login);
      const [a, b] = await Promise.all([
        s.takeLoginState('s1', T0),
        other.takeLoginState('s1', T0),
      ]);
      expect([a, b].filter((x) => x !== null)).toEqual([login]);
      expect(await s.takeLoginState('s1', T0)).toBeNull();
      await s.putLoginState({ ...login, state: 's2' });
      expect(await s.takeLoginState('s2', T0 + 600_000)).toBeNull(); // expired
    } finally {
      await other.close();
    }
  });
}
