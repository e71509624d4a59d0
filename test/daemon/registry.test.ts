/** The registry shares read-only policy objects and schedule lists between jobs that have equal ones. */
import { expect, it } from 'vitest';
import { effectivePolicy } from '../../src/contract/manifest/effective.js';
import {
  buildRegistry,
  policyKey,
  samePolicy,
  type RegisteredJob,
} from '../../src/daemon/registry.js';
import { manifest } from '../helpers/daemon.js';

const full = {
  concurrency: 'Enqueue',
  concurrency_scope: 'host',
  timeout_seconds: 30,
  retries: { max_attempts: 3, min_seconds: 2, max_seconds: 20 },
  max_concurrent: 2,
  queue_max: 5,
  catchup: { mode: 'all', window_seconds: 600, max_runs: 4 },
  jitter: { stable_seconds: 7, random_seconds: 3 },
};

/** Every leaf of an object as a path of keys. */
function leaves(o: object, path: string[] = []): string[][] {
  return Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' ? leaves(v as object, [...path, k]) : [[...path, k]],
  );
}

it('the policy key and the comparison change with every field of an effective policy, whatever fields it grows', () => {
  const [job] = manifest('a', [
    { name: 'j', schedule: '* * * * *', request: { url: 'https://e.x/' }, policy: full },
  ]).jobs;
  const policy = effectivePolicy(job!);
  const paths = leaves(policy);
  expect(paths.length).toBeGreaterThanOrEqual(13);
  for (const path of paths) {
    const copy = structuredClone(policy) as unknown as Record<string, unknown>;
    const parent = path.slice(0, -1).reduce((o, k) => o[k] as Record<string, unknown>, copy);
    const leaf = path.at(-1)!;
    const v = parent[leaf];
    parent[leaf] = typeof v === 'number' ? v + 1 : v === null ? 1 : `${String(v)}x`;
    expect(policyKey(copy as never), path.join('.')).not.toBe(policyKey(policy));
    expect(samePolicy(copy as never, policy), path.join('.')).toBe(false);
    expect(samePolicy(structuredClone(policy), policy)).toBe(true);
  }
  // null and the text "null" are different windows
  const open = structuredClone(policy);
  open.catchup.window_seconds = null;
  expect(policyKey(open)).not.toBe(policyKey(policy));
});

it('jobs with equal policies and schedules share them; the others do not', () => {
  const job = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    schedule: '*/5 * * * *',
    request: { url: 'https://e.x/' + name },
    ...extra,
  });
  const registry = buildRegistry([
    manifest('a', [job('one'), job('two'), job('slow', { policy: { timeout_seconds: 90 } })]),
    manifest('b', [job('three'), job('other', { schedule: '0 * * * *' })]),
  ]);
  const get = (k: string) => {
    const j = registry.get(k);
    if (!j) throw new Error(`${k} is not registered`);
    return j;
  };
  const [one, two, slow, three, other] = ['a/one', 'a/two', 'a/slow', 'b/three', 'b/other'].map(
    get,
  ) as [RegisteredJob, RegisteredJob, RegisteredJob, RegisteredJob, RegisteredJob];
  expect(one.policy).toBe(two.policy);
  expect(one.overlap).toBe(three.overlap);
  expect(one.catchup).toBe(two.catchup);
  expect(slow.policy).not.toBe(one.policy);
  expect(slow.policy.timeout_seconds).toBe(90);
  expect(one.policy.timeout_seconds).toBe(60);
  expect(one.schedules).toBe(three.schedules);
  expect(other.schedules).not.toBe(one.schedules);
  expect(other.schedules[0]).not.toBe(one.schedules[0]);
  expect([one, slow, other].map((j) => [j.key, j.job.name, j.app])).toEqual([
    ['a/one', 'one', 'a'],
    ['a/slow', 'slow', 'a'],
    ['b/other', 'other', 'b'],
  ]);
});
