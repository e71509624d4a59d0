/**
 * Failures of the aws-scheduler backend, through the real SDK: AWS error responses from the
 * recording endpoint (permissions, validation, a missing group, 5xx) and an endpoint nobody
 * listens on. Each maps to the seam's error class (exit code) with a message naming the fix.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BackendUnreachableError,
  BackendWriteError,
  type Backend,
} from '../../src/reconcile/backend.js';
import { createAwsBackend } from '../../src/reconcile/backends/aws.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { changeSetOf, plan } from '../../src/reconcile/plan.js';
import { startFakeAwsScheduler, type FakeAwsScheduler } from '../helpers/fake-aws-scheduler.js';
import { awsEnv, backendFor, billing, ROLE, seedForeign, TARGET } from './aws-fixture.js';

describe('aws-scheduler backend: AWS error responses', () => {
  let fake: FakeAwsScheduler;
  let backend: Backend;
  beforeEach(async () => {
    fake = await startFakeAwsScheduler();
    seedForeign(fake);
    backend = backendFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  it('AccessDenied is a write error that names the operation and the permissions', async () => {
    fake.failOp('ListSchedules', {
      status: 400,
      type: 'AccessDeniedException',
      message: 'User is not authorized to perform: scheduler:ListSchedules',
    });
    const err = await backend.list('billing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendWriteError);
    expect(String(err)).toMatch(
      /ListSchedules failed .*AccessDeniedException: User is not authorized.*scheduler:ListSchedules, GetSchedule, CreateSchedule.*iam:PassRole/,
    );
    fake.failOp('ListSchedules', null);
    fake.failOp('CreateSchedule', {
      status: 400,
      type: 'ValidationException',
      message: 'The execution role you provide must allow AWS EventBridge Scheduler to assume it',
    });
    const p = plan(desiredEntries(billing), await backend.list('billing'), backend);
    await expect(backend.apply(changeSetOf(p))).rejects.toThrow(
      /CreateSchedule failed .*ValidationException: The execution role/,
    );
  });

  it('a missing schedule group lists as empty and fails writes with the fix', async () => {
    fake.failOp('ListSchedules', {
      status: 404,
      type: 'ResourceNotFoundException',
      message: 'Schedule group nope does not exist.',
    });
    expect(await backend.list()).toEqual([]);
    fake.failOp('CreateSchedule', {
      status: 404,
      type: 'ResourceNotFoundException',
      message: 'Schedule group nope does not exist.',
    });
    const p = plan(desiredEntries(billing), [], backend);
    await expect(backend.apply(changeSetOf(p))).rejects.toThrow(/create-schedule-group/);
  });

  it('throttling and 5xx are treated as unreachable (transient)', async () => {
    fake.failOp('ListSchedules', { status: 500, type: 'InternalServerException', message: 'boom' });
    await expect(backend.list()).rejects.toBeInstanceOf(BackendUnreachableError);
  });
});

describe('aws-scheduler backend without an endpoint', () => {
  it('an unreachable endpoint is BackendUnreachableError', async () => {
    const fake = await startFakeAwsScheduler();
    const url = fake.url;
    await fake.close(); // nothing listens there any more
    const backend = createAwsBackend({
      env: awsEnv(url),
      awsTargetArn: TARGET,
      awsRoleArn: ROLE,
      clientConfig: { maxAttempts: 1 },
    });
    const err = await backend.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnreachableError);
    expect(String(err)).toMatch(/ListSchedules failed .*ECONNREFUSED.*AWS_ENDPOINT_URL/);
  });

  it('a missing region is a clear error naming --aws-region', async () => {
    const backend = createAwsBackend({
      env: {
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
        AWS_ACCESS_KEY_ID: 'a',
        AWS_SECRET_ACCESS_KEY: 'b',
      },
      clientConfig: { maxAttempts: 1 },
    });
    await expect(backend.list()).rejects.toThrow(/--aws-region or set AWS_REGION/);
  });
});
