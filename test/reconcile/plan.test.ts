/**
 * The reconciler core: desired entries, the plan (table tests), the JSON and table renderings,
 * and apply's order, refusals, no-op guarantee, rollback and lock — on an in-memory backend.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BackendWriteError, type OwnedEntry } from '../../src/reconcile/backend.js';
import {
  applyReconcile,
  ApplyLockedError,
  takeApplyLock,
  type ApplyEvent,
} from '../../src/reconcile/apply.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan, planToJson, renderPlanTable } from '../../src/reconcile/plan.js';
import { backendContract, contractManifest } from './contract.js';
import { memoryBackend, memoryFixture } from './memory-backend.js';

backendContract('memory (reference)', memoryFixture, { seconds: 'honour' });

const m = contractManifest;
const owned = (
  app: string,
  job: string,
  index: number,
  hash: string,
  modified?: string,
): OwnedEntry => ({
  id: `cronix-${app}-${job}-${index}`,
  app,
  job,
  scheduleIndex: index,
  hash,
  ...(modified ? { modified } : {}),
});

describe('desiredEntries', () => {
  it('gives one entry per job × schedule, with ids, hashes and the job spec', () => {
    const d = desiredEntries(
      m('billing', [{ name: 'sync', schedules: ['*/5 * * * *', '0 1 * * *'] }, { name: 'a' }]),
    );
    expect(d.map((e) => [e.id, e.scheduleIndex, e.schedule])).toEqual([
      ['cronix-billing-a-0', 0, '*/10 * * * *'],
      ['cronix-billing-sync-0', 0, '*/5 * * * *'],
      ['cronix-billing-sync-1', 1, '0 1 * * *'],
    ]);
    expect(d.every((e) => /^[0-9a-f]{16}$/.test(e.hash))).toBe(true);
    expect(new Set(d.map((e) => e.hash)).size).toBe(3);
    expect(d[0]?.secretRefs).toEqual(['env:CRON_SECRET']);
  });

  it('skips disabled jobs and lets --secret-ref replace the job refs', () => {
    const manifest = m('billing', [{ name: 'on' }, { name: 'off' }]);
    manifest.jobs.find((j) => j.name === 'off')!.enabled = false;
    const d = desiredEntries(manifest, { secretRefs: ['file:/etc/cronix/secret'] });
    expect(d.map((e) => e.job)).toEqual(['on']);
    expect(d[0]?.secretRefs).toEqual(['file:/etc/cronix/secret']);
  });
});

describe('plan', () => {
  const backend = { name: 'crontab' as const, refuse: (): string[] => [] };
  const desired = desiredEntries(m('billing', [{ name: 'a' }, { name: 'b' }, { name: 'c' }]));
  const hashOf = (job: string): string => desired.find((d) => d.job === job)!.hash;

  const cases: { name: string; owned: OwnedEntry[]; want: Record<string, string[]> }[] = [
    {
      name: 'empty backend: all creates',
      owned: [],
      want: { creates: ['a', 'b', 'c'], updates: [], deletes: [], unchanged: [] },
    },
    {
      name: 'same hashes: all unchanged',
      owned: ['a', 'b', 'c'].map((j) => owned('billing', j, 0, hashOf(j))),
      want: { creates: [], updates: [], deletes: [], unchanged: ['a', 'b', 'c'] },
    },
    {
      name: 'hash differs → update; gone → delete; other apps ignored',
      owned: [
        owned('billing', 'a', 0, '0000000000000000'),
        owned('billing', 'b', 0, hashOf('b')),
        owned('billing', 'old', 0, '1111111111111111'),
        owned('billing', 'b', 1, '2222222222222222'),
        owned('billing-eu', 'x', 0, '3333333333333333'),
      ],
      want: { creates: ['c'], updates: ['a'], deletes: ['b#1', 'old'], unchanged: ['b'] },
    },
    {
      name: 'a modified entry is updated even with a current hash',
      owned: [
        owned('billing', 'a', 0, hashOf('a'), 'cron line edited by hand'),
        owned('billing', 'b', 0, hashOf('b')),
        owned('billing', 'c', 0, hashOf('c')),
      ],
      want: { creates: [], updates: ['a'], deletes: [], unchanged: ['b', 'c'] },
    },
    {
      name: 'duplicated entries count once and are rewritten',
      owned: [
        owned('billing', 'a', 0, hashOf('a')),
        owned('billing', 'a', 0, hashOf('a')),
        owned('billing', 'b', 0, hashOf('b')),
        owned('billing', 'c', 0, hashOf('c')),
      ],
      want: { creates: [], updates: ['a'], deletes: [], unchanged: ['b', 'c'] },
    },
  ];
  const label = (e: { job: string; scheduleIndex: number }): string =>
    e.scheduleIndex === 0 ? e.job : `${e.job}#${e.scheduleIndex}`;

  it.each(cases)('$name', ({ owned: o, want }) => {
    const p = plan(desired, o, backend);
    expect({
      creates: p.creates.map(label),
      updates: p.updates.map((u) => label(u.entry)),
      deletes: p.deletes.map(label),
      unchanged: p.unchanged.map(label),
    }).toEqual(want);
    expect(p.refusals).toEqual([]);
  });

  it('collects every refusal, including entries without any secret ref', () => {
    const manifest = m('billing', [{ name: 'a' }, { name: 'b' }]);
    manifest.jobs[1]!.auth.secret_refs = [];
    const p = plan(desiredEntries(manifest), [], {
      name: 'crontab',
      refuse: (e) => (e.job === 'a' ? ['no can do', 'nor this'] : []),
    });
    expect(p.refusals).toEqual([
      { id: 'cronix-billing-a-0', schedule: '*/10 * * * *', reasons: ['no can do', 'nor this'] },
      {
        id: 'cronix-billing-b-0',
        schedule: '*/10 * * * *',
        reasons: [expect.stringMatching(/no auth.secret_refs.*--secret-ref/)],
      },
    ]);
    // a refused entry is in none of the other lists
    expect(p.creates).toEqual([]);
  });

  it('needs exactly one app', () => {
    expect(() => plan([], [], backend)).toThrow(/exactly one app/);
    expect(
      plan([], [owned('billing', 'a', 0, '0000000000000000')], backend, { app: 'billing' }).deletes,
    ).toHaveLength(1);
  });

  it('renders a stable JSON shape and a table in apply order (deletes, updates, creates)', () => {
    const p = plan(
      desired,
      [owned('billing', 'a', 0, '0000000000000000'), owned('billing', 'z', 0, '1111111111111111')],
      backend,
    );
    const json = planToJson(p);
    expect(Object.keys(json)).toEqual([
      'app',
      'backend',
      'creates',
      'updates',
      'deletes',
      'unchanged',
      'refusals',
      'summary',
    ]);
    expect(json.updates[0]).toEqual({
      id: 'cronix-billing-a-0',
      app: 'billing',
      job: 'a',
      schedule_index: 0,
      schedule: '*/10 * * * *',
      hash: hashOf('a'),
      previous_hash: '0000000000000000',
      reason: 'hash',
    });
    expect(json.deletes[0]).toEqual({
      id: 'cronix-billing-z-0',
      app: 'billing',
      job: 'z',
      schedule_index: 0,
      hash: '1111111111111111',
    });
    expect(json.summary).toEqual({ create: 2, update: 1, delete: 1, unchanged: 0, refused: 0 });
    const actions = renderPlanTable(p)
      .slice(1)
      .map((l) => l.split(/\s+/)[0])
      .filter((a) => a !== '' && a !== 'Plan:');
    expect(actions).toEqual(['delete', 'update', 'create', 'create']);
    expect(changeSetOf(p).deletes.map((d) => d.job)).toEqual(['z']);
  });
});

describe('applyReconcile', () => {
  const setup = () => {
    const specDir = join(mkdtempSync(join(tmpdir(), 'cronix-apply-')), 'jobs');
    const backend = memoryBackend();
    const events: ApplyEvent[] = [];
    const run = (manifest: ReturnType<typeof m>, dryRun = false) =>
      applyReconcile(desiredEntries(manifest), backend, {
        app: manifest.app,
        specDir,
        dryRun,
        onEvent: (e) => events.push(e),
      });
    return { specDir, backend, events, run };
  };

  it('writes spec files (0640) before the backend, deletes before updates before creates, removes old specs after', async () => {
    const { specDir, backend, events, run } = setup();
    await run(m('billing', [{ name: 'a' }, { name: 'old' }]));
    const spec = join(specDir, 'billing.a.json');
    expect(statSync(spec).mode & 0o777).toBe(0o640);
    const parsed = JSON.parse(readFileSync(spec, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['app', 'schedule_index', 'secret_refs', 'job']);
    expect(parsed['secret_refs']).toEqual(['env:CRON_SECRET']);
    events.length = 0;
    backend.calls.length = 0;
    await run(
      m('billing', [{ name: 'a', url: 'https://billing.example.internal/v2' }, { name: 'new' }]),
    );
    expect(backend.calls).toEqual([
      'delete cronix-billing-old-0',
      'put cronix-billing-a-0',
      'put cronix-billing-new-0',
    ]);
    expect(
      events.map((e) => `${e.event} ${'entry' in e ? e.entry.job : e.path.split('/').pop()}`),
    ).toEqual([
      'spec-written billing.a.json',
      'spec-written billing.new.json',
      'entry-deleted old',
      'entry-updated a',
      'entry-created new',
      'spec-removed billing.old.json',
    ]);
    expect(() => statSync(join(specDir, 'billing.old.json'))).toThrow();
  });

  it('an unchanged manifest changes nothing: no backend call, no event, spec files untouched', async () => {
    const { specDir, backend, events, run } = setup();
    const manifest = m('billing', [
      { name: 'a' },
      { name: 'b', schedules: ['1 * * * *', '2 * * * *'] },
    ]);
    await run(manifest);
    const before = statSync(join(specDir, 'billing.b.json'));
    events.length = 0;
    backend.calls.length = 0;
    await new Promise((r) => setTimeout(r, 20));
    const result = await run(manifest);
    expect(result.applied).toBe(true);
    expect(result.plan.unchanged).toHaveLength(3);
    expect(backend.calls).toEqual([]);
    expect(events).toEqual([]);
    const after = statSync(join(specDir, 'billing.b.json'));
    expect([after.mtimeMs, after.ino]).toEqual([before.mtimeMs, before.ino]);
  });

  it('a refused plan writes nothing (no spec file, no backend call)', async () => {
    const { specDir, backend, events, run } = setup();
    const result = await run(
      m('billing', [{ name: 'a' }, { name: 'q', policy: { concurrency: 'Enqueue' } }]),
    );
    expect(result.applied).toBe(false);
    expect(result.plan.refusals.map((r) => r.id)).toEqual(['cronix-billing-q-0']);
    expect(backend.calls).toEqual([]);
    expect(events).toEqual([]);
    expect(() => statSync(join(specDir, 'billing.a.json'))).toThrow();
  });

  it('dry run plans without writing or locking', async () => {
    const { specDir, backend, run } = setup();
    const result = await run(m('billing', [{ name: 'a' }]), true);
    expect(result.applied).toBe(false);
    expect(result.specFiles.write.map((w) => w.job)).toEqual(['a']);
    expect(backend.calls).toEqual([]);
    expect(() => statSync(specDir)).toThrow();
  });

  it('puts the spec files back when the backend fails', async () => {
    const { specDir, backend, run } = setup();
    await run(m('billing', [{ name: 'a' }]));
    const spec = join(specDir, 'billing.a.json');
    const original = readFileSync(spec, 'utf8');
    backend.failNext = new BackendWriteError('disk full');
    await expect(
      run(m('billing', [{ name: 'a', url: 'https://x.example/v2' }, { name: 'b' }])),
    ).rejects.toThrow('disk full');
    expect(readFileSync(spec, 'utf8')).toBe(original);
    expect(() => statSync(join(specDir, 'billing.b.json'))).toThrow();
  });

  it('rewrites a spec file whose content or mode was changed by hand', async () => {
    const { specDir, events, run } = setup();
    const manifest = m('billing', [{ name: 'a' }]);
    await run(manifest);
    writeFileSync(join(specDir, 'billing.a.json'), '{}');
    events.length = 0;
    await run(manifest);
    expect(events.map((e) => e.event)).toEqual(['spec-written']);
  });

  it('waits for the apply lock, then fails naming the holder', async () => {
    const { specDir, run } = setup();
    const lease = await takeApplyLock(specDir);
    try {
      const started = Date.now();
      await expect(
        applyReconcile(desiredEntries(m('billing', [{ name: 'a' }])), memoryBackend(), {
          app: 'billing',
          specDir,
          lockWaitMs: 300,
        }),
      ).rejects.toThrow(ApplyLockedError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      await lease.release();
    }
    await expect(run(m('billing', [{ name: 'a' }]))).resolves.toMatchObject({ applied: true });
  });
});
