/**
 * `cronix plan/apply/list --backend aws-scheduler` through the built binary (`npm run build`
 * first), pointed at the recording Scheduler endpoint with `AWS_ENDPOINT_URL`: the operator's
 * view of the backend — exit codes, INFO lines, no write on a second apply, no SDK noise.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAwsScheduler, type FakeAwsScheduler } from '../helpers/fake-aws-scheduler.js';
import { ROLE, TARGET } from './aws-fixture.js';
import { cronixAsync, manifestOf, workspace } from './cli-helpers.js';

describe('cronix --backend aws-scheduler (built binary, recording endpoint)', () => {
  let fake: FakeAwsScheduler;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    fake = await startFakeAwsScheduler();
    fake.seed({ Name: 'nightly-backup', ScheduleExpression: 'cron(0 3 * * ? *)' });
    env = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      AWS_ENDPOINT_URL: fake.url,
      AWS_ACCESS_KEY_ID: 'AKIDCRONIXTEST',
      AWS_SECRET_ACCESS_KEY: 'cronix-test-secret',
      AWS_REGION: 'eu-central-1',
      AWS_MAX_ATTEMPTS: '1',
    };
  });
  afterEach(async () => {
    await fake.close();
  });

  it('applies, lists, and a second apply sends no write', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle', 'report']));
    const flags = [
      '--backend',
      'aws-scheduler',
      '--spec-dir',
      ws.specDir,
      '--aws-target-arn',
      TARGET,
      '--aws-role-arn',
      ROLE,
    ];
    const apply = await cronixAsync(['apply', m, ...flags], env);
    expect(apply.stderr).not.toMatch(/NodeVersionSupportWarning|Warning/);
    expect(apply.status).toBe(0);
    expect(apply.stderr).toContain('info: created cronix-billing-settle-0 (*/10 * * * *)');
    expect(fake.writes().map((w) => `${w.method} ${w.path}`)).toEqual([
      'POST /schedules/cronix-billing-report-0',
      'POST /schedules/cronix-billing-settle-0',
    ]);
    expect(fake.writes()[0]?.body).toMatchObject({
      ScheduleExpression: 'cron(0/10 * * * ? *)',
      FlexibleTimeWindow: { Mode: 'OFF' },
    });

    fake.clearRequests();
    const again = await cronixAsync(['apply', m, ...flags], env);
    expect(again.status).toBe(0);
    expect(again.stderr).not.toContain('info:');
    expect(fake.writes()).toEqual([]);

    const list = await cronixAsync(['list', '--backend', 'aws-scheduler', '-o', 'json'], env);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain('cronix-billing-settle-0');
    expect(list.stdout).not.toContain('nightly-backup');
  });

  it('a refused schedule exits 1 with the reason; a bad flag exits 2; no endpoint exits 3', async () => {
    const ws = workspace();
    const refused = ws.manifest({
      version: 1,
      app: 'billing',
      jobs: [
        {
          name: 'either',
          schedule: '0 0 1,15 * FRI',
          request: { url: 'https://billing.example.internal/either' },
          auth: { secret_refs: ['env:CRON_SECRET'] },
        },
      ],
    });
    const flags = [
      '--backend',
      'aws-scheduler',
      '--aws-target-arn',
      TARGET,
      '--aws-role-arn',
      ROLE,
    ];
    const r1 = await cronixAsync(['apply', refused, ...flags, '--spec-dir', ws.specDir], env);
    expect(r1.status).toBe(1);
    expect(r1.stdout + r1.stderr).toMatch(/cannot state OR/);
    expect(fake.writes()).toEqual([]);

    const m = ws.manifest(manifestOf('billing', ['settle']), 'ok.json');
    const r2 = await cronixAsync(
      ['plan', m, '--backend', 'aws-scheduler', '--aws-role-arn', 'not-an-arn'],
      env,
    );
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/--aws-role-arn "not-an-arn" is not an IAM role ARN/);

    const url = fake.url;
    await fake.close();
    fake = await startFakeAwsScheduler(); // for afterEach
    const r3 = await cronixAsync(['plan', m, ...flags], { ...env, AWS_ENDPOINT_URL: url });
    expect(r3.status).toBe(3);
    expect(r3.stderr).toMatch(/ListSchedules failed .*ECONNREFUSED/);
  });
});
