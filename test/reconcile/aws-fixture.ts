/**
 * Shared setup of the aws-scheduler backend tests: a backend built on the real SDK pointed at
 * the recording fake endpoint, the foreign schedules every test starts with, and a stable
 * serialization of the fake's state.
 */
import type { Backend } from '../../src/reconcile/backend.js';
import { createAwsBackend, type AwsBackendOptions } from '../../src/reconcile/backends/aws.js';
import type { FakeAwsScheduler } from '../helpers/fake-aws-scheduler.js';
import { contractManifest } from './contract.js';

/** Target ARN the tests install. */
export const TARGET = 'arn:aws:lambda:us-east-1:123456789012:function:cronix-trigger';
/** Role ARN the tests install. */
export const ROLE = 'arn:aws:iam::123456789012:role/cronix-scheduler';
/** The backend's clock in these tests. */
export const NOW = Date.parse('2026-05-05T10:07:31Z');

/** Environment pointing the real SDK at `url` with dummy credentials. */
export function awsEnv(url: string): NodeJS.ProcessEnv {
  return {
    AWS_ENDPOINT_URL: url,
    AWS_ACCESS_KEY_ID: 'AKIDCRONIXTEST',
    AWS_SECRET_ACCESS_KEY: 'cronix-test-secret',
    AWS_REGION: 'us-east-1',
  };
}

/** A backend over the fake, with the test target, role and clock. */
export function backendFor(
  fake: FakeAwsScheduler,
  extra: Partial<AwsBackendOptions> = {},
): Backend {
  return createAwsBackend({
    env: awsEnv(fake.url),
    awsTargetArn: TARGET,
    awsRoleArn: ROLE,
    now: () => NOW,
    clientConfig: { maxAttempts: 1 },
    ...extra,
  });
}

/** Foreign schedules every test starts with: none carries a valid marker for its own name. */
export function seedForeign(fake: FakeAwsScheduler): void {
  fake.seed({ Name: 'nightly-backup', ScheduleExpression: 'cron(0 3 * * ? *)' });
  fake.seed({ Name: 'cronix-billing-settle-9', ScheduleExpression: 'rate(1 hour)' }); // no marker
  fake.seed({
    Name: 'cronix-billing-lookalike-0', // a marker copied onto another name
    ScheduleExpression: 'rate(1 day)',
    Description:
      'cronix:v1 app=billing job=settle index=0 hash=0123456789abcdef sum=0123456789abcdef',
  });
  fake.seed({
    Name: 'cronix-billing-report-0', // our name in another group
    GroupName: 'other',
    ScheduleExpression: 'rate(5 minutes)',
  });
}

/** The fake's state without modification times: equal strings mean "nothing changed". */
export function rawState(fake: FakeAwsScheduler): string {
  const all = ['default', 'other', 'cronix'].flatMap((g) =>
    [...fake.schedules(g).values()].map(({ LastModificationDate: _, ...rest }) => rest),
  );
  return JSON.stringify(all.sort((a, b) => a.Arn.localeCompare(b.Arn)));
}

/** Two jobs, three schedules (one `@every`). */
export const billing = contractManifest('billing', [
  { name: 'settle', schedules: ['*/10 * * * *', '@every 1h30m'] },
  { name: 'report', schedules: ['0 9 * * MON-FRI'] },
]);
