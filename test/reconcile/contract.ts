/**
 * The shared backend contract suite (SPEC §6): every reconciler backend runs it from its own
 * `test/reconcile/<backend>.test.ts`:
 *
 * ```ts
 * import { backendContract } from './contract.js';
 * backendContract('crontab (cron.d file)', async () => ({ backend, raw, stamp, assertForeignIntact }));
 * ```
 *
 * The fixture gives a FRESH backend whose target is already seeded with foreign entries (lines,
 * units, objects, schedules that are not ours), and ways to read the raw target. The suite drives
 * the backend through `plan` + `backend.apply`, exactly as `cronix apply` does (without the spec
 * files and the apply lock, which are the core's job and tested with the CLI).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseManifest, type Manifest } from '../../src/contract/manifest/index.js';
import type { Backend, ChangeSet, OwnedEntry } from '../../src/reconcile/backend.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan, type Plan } from '../../src/reconcile/plan.js';
import { sleep } from '../helpers/common.js';

/** A fresh backend over a target seeded with foreign entries, plus probes of the raw target. */
export interface BackendFixture {
  /** The backend under test. Its target already holds foreign entries (not ours). */
  backend: Backend;
  /**
   * The whole raw target as one string: the file's bytes, or the objects the API holds
   * serialized in a stable order. Equal strings mean "nothing changed".
   */
  raw(): Promise<string>;
  /**
   * Something that changes whenever the target is written, even with identical content: a
   * file's mtime + inode + ctime, the count of mutating API requests, a reload counter.
   */
  stamp(): Promise<string>;
  /** Throws (an `expect` failure) unless every seeded foreign entry is still there, untouched. */
  assertForeignIntact(): Promise<void>;
  /** Releases what the fixture holds (temp dirs, servers). */
  close?(): Promise<void>;
}

/** Options of {@link backendContract}. */
export interface ContractOptions {
  /**
   * What the backend does with schedules of the seconds extension (SPEC §3: 6-field cron,
   * `@every` below a minute): `honour` installs them, `refuse` refuses them at plan time with a
   * reason naming the job, the schedule and the alternative (daemon mode or systemd).
   */
  seconds: 'honour' | 'refuse';
  /** Time zone the test jobs use (default `UTC`); must be one the backend accepts. */
  timezone?: string;
  /** Milliseconds to wait before comparing stamps, for file systems with coarse mtimes. */
  stampDelayMs?: number;
}

type JobDef = {
  name: string;
  schedules?: string[];
  url?: string;
  policy?: Record<string, unknown>;
  /** A command job (SPEC §11) instead of an HTTP one: no request, no auth. */
  command?: Record<string, unknown>;
};

/** A normalized manifest of `app` with the given jobs (through the real parser). */
export function contractManifest(app: string, jobs: readonly JobDef[], timezone = 'UTC'): Manifest {
  const r = parseManifest({
    version: 1,
    app,
    jobs: jobs.map((j) => ({
      name: j.name,
      schedules: j.schedules ?? ['*/10 * * * *'],
      timezone,
      ...(j.command
        ? { command: j.command }
        : {
            request: { url: j.url ?? `https://${app}.example.internal/cron/${j.name}` },
            auth: { secret_refs: ['env:CRON_SECRET'] },
          }),
      ...(j.policy ? { policy: j.policy } : {}),
    })),
  });
  if (!r.ok) throw new Error(`contract manifest is invalid: ${JSON.stringify(r.errors)}`);
  return r.manifest;
}

/** Plans `manifest` against what the backend owns, asserts no refusal, applies, returns the plan. */
export async function reconcileWith(backend: Backend, manifest: Manifest): Promise<Plan> {
  const owned = await backend.list(manifest.app);
  const p = plan(desiredEntries(manifest), owned, backend);
  expect(p.refusals).toEqual([]);
  await backend.apply(changeSetOf(p));
  return p;
}

const summary = (entries: OwnedEntry[]): string[] =>
  entries.map((e) => `${e.id} ${e.app} ${e.job} ${e.scheduleIndex} ${e.hash}`).sort();

/**
 * Registers the contract suite for one backend. `makeFixture` is called before every test and
 * must return a fresh, seeded target.
 */
export function backendContract(
  name: string,
  makeFixture: () => Promise<BackendFixture>,
  options: ContractOptions,
): void {
  const tz = options.timezone ?? 'UTC';
  const m = (app: string, jobs: readonly JobDef[]): Manifest => contractManifest(app, jobs, tz);

  describe(`backend contract: ${name}`, () => {
    let fx: BackendFixture;
    beforeEach(async () => {
      fx = await makeFixture();
    });
    afterEach(async () => {
      await fx.close?.();
    });

    it('reports no owned entries on a target holding only foreign entries', async () => {
      expect(await fx.backend.list()).toEqual([]);
      expect(await fx.backend.list('billing')).toEqual([]);
    });

    it('creates one entry per job and lists them with their hashes; foreign entries survive', async () => {
      const manifest = m('billing', [
        { name: 'settle' },
        { name: 'report', schedules: ['0 3 * * *'] },
      ]);
      const p = await reconcileWith(fx.backend, manifest);
      expect(p.creates.map((c) => c.id)).toEqual([
        'cronix-billing-report-0',
        'cronix-billing-settle-0',
      ]);
      const want = desiredEntries(manifest);
      expect(summary(await fx.backend.list('billing'))).toEqual(
        summary(want.map((d) => ({ ...d }))),
      );
      await fx.assertForeignIntact();
    });

    it('updates an entry whose hash changed, in place, and nothing else', async () => {
      await reconcileWith(fx.backend, m('billing', [{ name: 'settle' }, { name: 'report' }]));
      const changed = m('billing', [
        { name: 'settle', schedules: ['5 4 * * *'], url: 'https://billing.example.internal/v2' },
        { name: 'report' },
      ]);
      const p = await reconcileWith(fx.backend, changed);
      expect(p.updates.map((u) => u.entry.id)).toEqual(['cronix-billing-settle-0']);
      expect(p.creates).toEqual([]);
      expect(p.deletes).toEqual([]);
      expect(summary(await fx.backend.list('billing'))).toEqual(summary(desiredEntries(changed)));
      await fx.assertForeignIntact();
    });

    it('deletes entries no longer desired; renaming a job deletes the old and creates the new', async () => {
      await reconcileWith(fx.backend, m('billing', [{ name: 'settle' }, { name: 'report' }]));
      const renamed = m('billing', [{ name: 'settle-all' }]);
      const p = await reconcileWith(fx.backend, renamed);
      expect(p.deletes.map((d) => d.id).sort()).toEqual([
        'cronix-billing-report-0',
        'cronix-billing-settle-0',
      ]);
      expect(p.creates.map((c) => c.id)).toEqual(['cronix-billing-settle-all-0']);
      expect(summary(await fx.backend.list('billing'))).toEqual(summary(desiredEntries(renamed)));
      await fx.assertForeignIntact();
    });

    it('an empty change set changes nothing at all (content and stamp)', async () => {
      const manifest = m('billing', [{ name: 'settle' }]);
      await reconcileWith(fx.backend, manifest);
      const before = await fx.raw();
      const stamp = await fx.stamp();
      await sleep(options.stampDelayMs ?? 20);
      const again = await reconcileWith(fx.backend, manifest);
      expect(again.unchanged.map((u) => u.id)).toEqual(['cronix-billing-settle-0']);
      expect(changeSetOf(again)).toEqual({ deletes: [], updates: [], creates: [] });
      await fx.backend.apply({ deletes: [], updates: [], creates: [] });
      expect(await fx.raw()).toBe(before);
      expect(await fx.stamp()).toBe(stamp);
    });

    it('applying the same change set twice gives the same target as applying it once', async () => {
      await reconcileWith(fx.backend, m('billing', [{ name: 'old' }]));
      const next = m('billing', [{ name: 'settle' }, { name: 'report' }]);
      const p = plan(desiredEntries(next), await fx.backend.list('billing'), fx.backend);
      const changes: ChangeSet = changeSetOf(p);
      await fx.backend.apply(changes);
      const once = await fx.raw();
      const listed = summary(await fx.backend.list('billing'));
      await fx.backend.apply(changes);
      expect(await fx.raw()).toBe(once);
      expect(summary(await fx.backend.list('billing'))).toEqual(listed);
      expect(listed).toEqual(summary(desiredEntries(next)));
      await fx.assertForeignIntact();
    });

    it('installs one entry per schedule of a multi-schedule job (3 schedules → 3 entries)', async () => {
      const three = m('billing', [
        { name: 'sync', schedules: ['*/15 * * * *', '0 6 * * 1-5', '30 22 * * 0'] },
      ]);
      const p = await reconcileWith(fx.backend, three);
      expect(p.creates.map((c) => c.id)).toEqual([
        'cronix-billing-sync-0',
        'cronix-billing-sync-1',
        'cronix-billing-sync-2',
      ]);
      const listed = await fx.backend.list('billing');
      expect(listed.map((e) => e.scheduleIndex).sort()).toEqual([0, 1, 2]);
      expect(new Set(listed.map((e) => e.hash)).size).toBe(3);
      expect(summary(listed)).toEqual(summary(desiredEntries(three)));

      const two = m('billing', [{ name: 'sync', schedules: ['*/15 * * * *', '0 6 * * 1-5'] }]);
      const shrink = await reconcileWith(fx.backend, two);
      expect(shrink.deletes.map((d) => d.id)).toEqual(['cronix-billing-sync-2']);
      expect(shrink.unchanged.map((u) => u.id)).toEqual([
        'cronix-billing-sync-0',
        'cronix-billing-sync-1',
      ]);
      expect(summary(await fx.backend.list('billing'))).toEqual(summary(desiredEntries(two)));
      await fx.assertForeignIntact();
    });

    it('lists by app, and one app never deletes another (even one whose name it prefixes)', async () => {
      await reconcileWith(fx.backend, m('shop', [{ name: 'restock' }, { name: 'audit' }]));
      await reconcileWith(fx.backend, m('shop-eu', [{ name: 'sync' }]));
      expect((await fx.backend.list('shop')).map((e) => e.id).sort()).toEqual([
        'cronix-shop-audit-0',
        'cronix-shop-restock-0',
      ]);
      expect((await fx.backend.list('shop-eu')).map((e) => `${e.app}/${e.job}`)).toEqual([
        'shop-eu/sync',
      ]);
      expect(await fx.backend.list()).toHaveLength(3);

      await reconcileWith(fx.backend, m('shop', [{ name: 'restock' }]));
      expect((await fx.backend.list('shop-eu')).map((e) => e.id)).toEqual([
        'cronix-shop-eu-sync-0',
      ]);
      expect((await fx.backend.list('shop')).map((e) => e.id)).toEqual(['cronix-shop-restock-0']);
      await fx.assertForeignIntact();
    });

    it('refuses Enqueue at plan time (it needs cronix serve), and a refused plan writes nothing', async () => {
      const before = await fx.raw();
      const stamp = await fx.stamp();
      const manifest = m('billing', [{ name: 'settle', policy: { concurrency: 'Enqueue' } }]);
      const [entry] = desiredEntries(manifest);
      expect(entry).toBeDefined();
      expect(fx.backend.refuse(entry!).join('; ')).toMatch(/Enqueue/);
      const p = plan(desiredEntries(manifest), await fx.backend.list('billing'), fx.backend);
      expect(p.refusals.map((r) => r.id)).toEqual(['cronix-billing-settle-0']);
      expect(await fx.raw()).toBe(before);
      expect(await fx.stamp()).toBe(stamp);
    });

    const secondsJobs: JobDef[] = [
      { name: 'tick', schedules: ['*/10 * * * * *'] },
      { name: 'pulse', schedules: ['@every 5s'] },
      { name: 'settle', schedules: ['30 0 9 * * MON-FRI'] },
    ];

    if (options.seconds === 'honour') {
      it('installs seconds schedules (6 fields, @every below a minute) and lists them', async () => {
        const manifest = m('billing', secondsJobs);
        const p = await reconcileWith(fx.backend, manifest);
        expect(p.creates).toHaveLength(3);
        expect(summary(await fx.backend.list('billing'))).toEqual(
          summary(desiredEntries(manifest)),
        );
        await fx.assertForeignIntact();
      });
    } else {
      it('refuses seconds schedules at plan time naming the job, the schedule and the alternative; nothing is written', async () => {
        const before = await fx.raw();
        const stamp = await fx.stamp();
        const manifest = m('billing', [
          ...secondsJobs,
          { name: 'hourly', schedules: ['0 * * * *'] },
        ]);
        const p = plan(desiredEntries(manifest), await fx.backend.list('billing'), fx.backend);
        expect(p.refusals.map((r) => r.id).sort()).toEqual([
          'cronix-billing-pulse-0',
          'cronix-billing-settle-0',
          'cronix-billing-tick-0',
        ]);
        const reason = (id: string): string =>
          p.refusals.find((r) => r.id === id)?.reasons.join('; ') ?? '';
        for (const [id, job, schedule] of [
          ['cronix-billing-tick-0', 'billing/tick', '"*/10 * * * * *"'],
          ['cronix-billing-pulse-0', 'billing/pulse', '"@every 5s"'],
          ['cronix-billing-settle-0', 'billing/settle', '"30 0 9 * * MON-FRI"'],
        ] as const) {
          expect(reason(id)).toContain(`job ${job}`);
          expect(reason(id)).toContain(schedule);
          expect(reason(id)).toMatch(/cronix serve.*--backend systemd/);
        }
        expect(await fx.raw()).toBe(before);
        expect(await fx.stamp()).toBe(stamp);
      });
    }
  });
}
