/**
 * The EventBridge Scheduler backend through the real `@aws-sdk/client-scheduler` against a
 * local endpoint (`AWS_ENDPOINT_URL`) that speaks the Scheduler REST-JSON protocol and records
 * every request: exact wire shapes of create / update / delete / list, the no-write guarantee,
 * foreign schedules left alone, drift, refusals, and the shared backend contract suite.
 * Failures are in aws-errors.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackendConfigError, type Backend } from '../../src/reconcile/backend.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan } from '../../src/reconcile/plan.js';
import { startFakeAwsScheduler, type FakeAwsScheduler } from '../helpers/fake-aws-scheduler.js';
import { backendFor, billing, rawState, ROLE, seedForeign, TARGET } from './aws-fixture.js';
import { backendContract, contractManifest, reconcileWith } from './contract.js';

describe('aws-scheduler backend against a recording Scheduler endpoint', () => {
  let fake: FakeAwsScheduler;
  let backend: Backend;
  let foreign: string;
  beforeEach(async () => {
    fake = await startFakeAwsScheduler();
    seedForeign(fake);
    foreign = rawState(fake);
    backend = backendFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  it('creates one schedule per (job, index) with the exact request body', async () => {
    const p = await reconcileWith(backend, billing);
    expect(p.creates.map((c) => c.id)).toEqual([
      'cronix-billing-report-0',
      'cronix-billing-settle-0',
      'cronix-billing-settle-1',
    ]);
    const writes = fake.writes();
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual([
      'POST /schedules/cronix-billing-report-0',
      'POST /schedules/cronix-billing-settle-0',
      'POST /schedules/cronix-billing-settle-1',
    ]);
    const [report, settle, every] = desiredEntries(billing);
    const input = (job: string, index: number): string =>
      `{"cronix":1,"app":"billing","job":"${job}","schedule_index":${index},"fire_time":"<aws.scheduler.scheduled-time>","args":["trigger","billing.${job}","--fire-time","<aws.scheduler.scheduled-time>"]}`;
    expect(writes[0]?.body).toMatchObject({
      GroupName: 'default',
      ScheduleExpression: 'cron(0 9 ? * 2-6 *)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'NONE',
      Target: { Arn: TARGET, RoleArn: ROLE, Input: input('report', 0) },
    });
    expect(writes[0]?.body?.['Description']).toMatch(
      new RegExp(
        `^cronix:v1 app=billing job=report index=0 hash=${report?.hash} sum=[0-9a-f]{16}$`,
      ),
    );
    expect(writes[0]?.body).not.toHaveProperty('StartDate');
    expect(writes[1]?.body).toMatchObject({
      ScheduleExpression: 'cron(0/10 * * * ? *)',
      Description: expect.stringContaining(`job=settle index=0 hash=${settle?.hash}`),
      Target: { Input: input('settle', 0) },
    });
    // @every → rate(), anchored on the epoch grid: the first 90-minute multiple after NOW
    expect(writes[2]?.body).toMatchObject({
      ScheduleExpression: 'rate(90 minutes)',
      StartDate: Date.parse('2026-05-05T10:30:00Z') / 1000,
      Description: expect.stringContaining(`index=1 hash=${every?.hash}`),
    });
    const inputJson = JSON.parse(String((writes[2]?.body?.['Target'] as { Input: string }).Input));
    expect(inputJson.args).toEqual([
      'trigger',
      'billing.settle',
      '--fire-time',
      '<aws.scheduler.scheduled-time>',
    ]);
    expect(rawState(fake)).toContain('nightly-backup');
  });

  it('lists through ListSchedules pages (prefix, group) and GetSchedule per candidate', async () => {
    await reconcileWith(backend, billing);
    fake.clearRequests();
    const listed = await backend.list('billing');
    expect(listed.map((e) => `${e.id} ${e.hash}`).sort()).toEqual(
      desiredEntries(billing)
        .map((d) => `${d.id} ${d.hash}`)
        .sort(),
    );
    expect(listed.every((e) => e.modified === undefined)).toBe(true);
    const lists = fake.requests.filter((r) => r.op === 'ListSchedules');
    expect(lists.length).toBeGreaterThanOrEqual(3); // page size 2: 5 candidates → 3 pages
    expect(lists[0]?.query).toMatchObject({
      NamePrefix: 'cronix-billing-',
      ScheduleGroup: 'default',
    });
    expect(lists[1]?.query['NextToken']).toBeDefined();
    const gets = fake.requests.filter((r) => r.op === 'GetSchedule');
    expect(gets.map((g) => g.path).sort()).toEqual([
      '/schedules/cronix-billing-lookalike-0',
      '/schedules/cronix-billing-report-0',
      '/schedules/cronix-billing-settle-0',
      '/schedules/cronix-billing-settle-1',
      '/schedules/cronix-billing-settle-9',
    ]);
    expect(gets.every((g) => g.query['groupName'] === 'default')).toBe(true);
    expect(await backend.list()).toHaveLength(3);
    expect(await backend.list('shop')).toEqual([]);
  });

  it('an unchanged manifest plans no change and applies with no write at all', async () => {
    await reconcileWith(backend, billing);
    const before = rawState(fake);
    fake.clearRequests();
    const p = await reconcileWith(backend, billing);
    expect(p.unchanged).toHaveLength(3);
    expect(changeSetOf(p)).toEqual({ deletes: [], updates: [], creates: [] });
    expect(fake.writes()).toEqual([]);
    expect(fake.requests.every((r) => r.method === 'GET')).toBe(true);
    expect(rawState(fake)).toBe(before);
  });

  it('updates with a full-replacement PUT and deletes with DELETE ?groupName', async () => {
    await reconcileWith(backend, billing);
    fake.clearRequests();
    const next = contractManifest('billing', [
      { name: 'settle', schedules: ['*/5 * * * *'] },
      { name: 'audit', schedules: ['@daily'] },
    ]);
    await reconcileWith(backend, next);
    expect(fake.writes().map((w) => `${w.method} ${w.path}`)).toEqual([
      'DELETE /schedules/cronix-billing-report-0',
      'DELETE /schedules/cronix-billing-settle-1',
      'PUT /schedules/cronix-billing-settle-0',
      'POST /schedules/cronix-billing-audit-0',
    ]);
    const [del, , put] = fake.writes();
    expect(del?.query).toMatchObject({ groupName: 'default' });
    expect(put?.body).toMatchObject({
      GroupName: 'default',
      ScheduleExpression: 'cron(0/5 * * * ? *)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: TARGET, RoleArn: ROLE },
    });
    expect(rawState(fake)).toContain('"Name":"cronix-billing-settle-9"');
  });

  it('never touches foreign schedules: no marker, a copied marker, or another group', async () => {
    await reconcileWith(backend, billing);
    await reconcileWith(backend, contractManifest('billing', [{ name: 'other' }]));
    const touched = fake.writes().map((w) => w.path);
    for (const name of ['nightly-backup', 'cronix-billing-settle-9', 'cronix-billing-lookalike-0'])
      expect(touched).not.toContain(`/schedules/${name}`);
    const kept = JSON.parse(rawState(fake)) as { Name: string }[];
    for (const s of JSON.parse(foreign) as { Name: string }[])
      expect(kept).toContainEqual(expect.objectContaining(s));
  });

  it('refuses to create over a foreign schedule of the same name', async () => {
    fake.seed({ Name: 'cronix-billing-report-0', ScheduleExpression: 'rate(2 hours)' });
    const before = rawState(fake);
    const manifest = contractManifest('billing', [{ name: 'report', schedules: ['@daily'] }]);
    const p = plan(desiredEntries(manifest), await backend.list('billing'), backend);
    await expect(backend.apply(changeSetOf(p))).rejects.toThrow(
      /cronix-billing-report-0: a schedule with this name already exists .* without the cronix marker/,
    );
    expect(rawState(fake)).toBe(before);
  });

  it('reports hand edits and changed target flags as modified, so the plan rewrites them', async () => {
    await reconcileWith(backend, billing);
    const s = fake.schedules().get('cronix-billing-report-0');
    if (s) s.ScheduleExpression = 'cron(0 10 ? * 2-6 *)';
    const listed = await backend.list('billing');
    expect(listed.find((e) => e.id === 'cronix-billing-report-0')?.modified).toBe(
      'edited outside cronix',
    );
    const p = await reconcileWith(backend, billing);
    expect(p.updates.map((u) => `${u.entry.id} ${u.reason}`)).toEqual([
      'cronix-billing-report-0 edited outside cronix',
    ]);
    expect(fake.schedules().get('cronix-billing-report-0')?.ScheduleExpression).toBe(
      'cron(0 9 ? * 2-6 *)',
    );

    const moved = backendFor(fake, { awsTargetArn: `${TARGET}-v2` });
    const p2 = await reconcileWith(moved, billing);
    expect(p2.updates.map((u) => u.reason)).toEqual(
      Array(3).fill('target ARN differs from --aws-target-arn'),
    );
    expect(fake.schedules().get('cronix-billing-settle-0')?.Target.Arn).toBe(`${TARGET}-v2`);
  });

  it('--report-to goes into the target input (SPEC §15); other report flags are a modification', async () => {
    const reporting = backendFor(fake, { report: { url: 'https://watch.example.com' } });
    await reconcileWith(reporting, billing);
    const input = JSON.parse(
      String(fake.schedules().get('cronix-billing-settle-0')?.Target.Input),
    ) as { args: string[] };
    expect(input.args).toEqual([
      'trigger',
      'billing.settle',
      '--fire-time',
      '<aws.scheduler.scheduled-time>',
      '--report-to',
      'https://watch.example.com',
    ]);
    expect((await reporting.list('billing')).map((e) => e.modified)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const p = await reconcileWith(backend, billing); // without --report-to
    expect(p.updates.map((u) => u.reason)).toEqual(
      Array(3).fill('target input differs from the current flags (--report-to)'),
    );
    expect(fake.schedules().get('cronix-billing-settle-0')?.Target.Input).not.toContain(
      '--report-to',
    );
  });

  it('uses --aws-schedule-group for every call', async () => {
    const grouped = backendFor(fake, { awsScheduleGroup: 'cronix' });
    await reconcileWith(grouped, billing);
    expect(fake.schedules('cronix').size).toBe(3);
    expect(fake.writes().every((w) => w.body?.['GroupName'] === 'cronix')).toBe(true);
    expect(await backend.list('billing')).toEqual([]); // the default group holds none of ours
    expect((await grouped.list('billing')).map((e) => e.id)).toHaveLength(3);
  });

  it('refuses at plan time what EventBridge cannot honour, naming the reason', () => {
    const entries = desiredEntries(
      contractManifest('billing', [
        { name: 'either', schedules: ['0 0 1,15 * FRI'] },
        { name: 'queue', policy: { concurrency: 'Enqueue' } },
        { name: 'parallel', policy: { max_concurrent: 4 } },
        { name: 'jitter', policy: { jitter: { random_seconds: 30 } } },
        { name: 'replay', policy: { catchup: { mode: 'all' } } },
        { name: 'seconds', schedules: ['@every 90s'] },
        { name: 'x'.repeat(50) },
        { name: 'script', command: { argv: ['/usr/local/bin/backup'] } },
      ]),
    );
    const reasons = Object.fromEntries(entries.map((e) => [e.job, backend.refuse(e).join('; ')]));
    expect(reasons['either']).toMatch(/cannot state OR/);
    expect(reasons['queue']).toMatch(/Enqueue.*cronix serve/);
    expect(reasons['parallel']).toMatch(/max_concurrent 4/);
    expect(reasons['jitter']).toMatch(/jitter/);
    expect(reasons['replay']).toMatch(/catchup.mode "all"/);
    expect(reasons['seconds']).toMatch(/whole minutes/);
    expect(reasons['script']).toMatch(
      /job script is a command job: EventBridge Scheduler has no host to run a command on.*--backend crontab, systemd or kubernetes/,
    );
    expect(reasons['x'.repeat(50)]).toMatch(
      /is 67 characters; EventBridge Scheduler allows 64.*at most 54 characters together/,
    );
    const plain = desiredEntries(contractManifest('billing', [{ name: 'ok' }]))[0];
    expect(backend.refuse(plain!)).toEqual([]);
  });

  it('missing target flags: list works, apply with writes is a usage error naming the flag', async () => {
    await reconcileWith(backend, billing);
    const bare = backendFor(fake, { awsTargetArn: undefined, awsRoleArn: undefined });
    expect(await bare.list('billing')).toHaveLength(3); // list / show / prune need no target
    const plain = desiredEntries(contractManifest('billing', [{ name: 'ok' }]));
    expect(bare.refuse(plain[0]!)).toEqual([]);
    const err = await bare
      .apply({ deletes: [], updates: [], creates: plain })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendConfigError);
    expect(String(err)).toMatch(/--aws-target-arn is required/);
    const noRole = backendFor(fake, { awsRoleArn: undefined });
    await expect(noRole.apply({ deletes: [], updates: [], creates: plain })).rejects.toThrow(
      /--aws-role-arn is required/,
    );
    // deleting needs no target
    const owned = await bare.list('billing');
    await bare.apply({ deletes: owned, updates: [], creates: [] });
    expect(await bare.list('billing')).toEqual([]);
  });

  it('rejects malformed flags when created (BackendConfigError: exit 2)', () => {
    expect(() => backendFor(fake, { awsRoleArn: 'cronix-role' })).toThrow(BackendConfigError);
    expect(() => backendFor(fake, { awsRoleArn: 'cronix-role' })).toThrow(/--aws-role-arn/);
    expect(() => backendFor(fake, { awsTargetArn: 'lambda' })).toThrow(/--aws-target-arn/);
    expect(() => backendFor(fake, { awsScheduleGroup: 'a b' })).toThrow(/--aws-schedule-group/);
  });
});

backendContract(
  'aws-scheduler (recording Scheduler endpoint)',
  async () => {
    const fake = await startFakeAwsScheduler();
    seedForeign(fake);
    const foreignState = rawState(fake);
    return {
      backend: backendFor(fake),
      raw: async () => rawState(fake),
      stamp: async () => String(fake.writes().length),
      assertForeignIntact: async () => {
        const now = JSON.parse(rawState(fake)) as unknown[];
        for (const s of JSON.parse(foreignState) as unknown[]) expect(now).toContainEqual(s);
      },
      close: () => fake.close(),
    };
  },
  { seconds: 'refuse' },
);
