import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/contract/manifest/types.js';
import { verify } from '../../src/contract/signature.js';
import {
  runFire,
  type AttemptGuard,
  type FireEvent,
  type FireInput,
} from '../../src/fire/engine.js';
import type {
  SendOptions,
  Transport,
  TransportRequest,
  TransportResult,
} from '../../src/fire/types.js';
import { FakeClock } from '../helpers/fake-clock.js';

function job(
  overrides: Partial<Job['policy']['retries']> = {},
  headers: Record<string, string> = {},
): Job {
  return {
    name: 'settle',
    schedules: ['*/10 * * * *'],
    timezone: 'UTC',
    request: { method: 'POST', url: 'https://billing.internal/run?x=1', headers, body: '{"a":1}' },
    policy: {
      concurrency: 'Forbid',
      concurrency_scope: 'host',
      timeout_seconds: 5,
      retries: { max_attempts: 4, min_seconds: 1, max_seconds: 3, ...overrides },
    },
    auth: { secret_refs: ['env:S'] },
  };
}

function input(j: Job = job()): FireInput {
  return {
    app: 'billing',
    job: j,
    runId: '01928f7e-0000-7000-8000-000000000000',
    runKey: 'billing/settle#2026-01-01T00:00:00Z#0123456789abcdef',
    fireTimeMs: Date.UTC(2026, 0, 1),
    actualTimeMs: Date.UTC(2026, 0, 1) + 1500,
    secrets: ['s3cret'],
    previousSuccessMs: Date.UTC(2025, 11, 31, 23, 50),
  };
}

/** A transport that answers from a script and advances the fake clock per attempt. */
function scripted(
  clock: FakeClock,
  results: TransportResult[],
): Transport & { sent: TransportRequest[]; options: SendOptions[] } {
  const sent: TransportRequest[] = [];
  const options: SendOptions[] = [];
  return {
    sent,
    options,
    async send(req, opts) {
      sent.push(req);
      options.push(opts);
      clock.advance(100);
      return results[sent.length - 1] ?? { kind: 'network-error', message: 'script exhausted' };
    },
  };
}

const ok = (status = 200): TransportResult => ({ kind: 'response', status, bodyExcerpt: 'ok' });

describe('runFire', () => {
  it('2xx on the first attempt → success, one attempt', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok(204)]);
    const r = await runFire(input(), { transport: t, clock });
    expect(r).toMatchObject({ outcome: 'success', attempts: 1, lastStatus: 204 });
    expect(clock.sleeps).toEqual([]);
  });

  it('4xx stops at once: app-rejected, no retry, body excerpt kept', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [{ kind: 'response', status: 422, bodyExcerpt: 'bad input' }, ok()]);
    const events: FireEvent[] = [];
    const r = await runFire(input(), { transport: t, clock, onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({
      outcome: 'app-rejected',
      attempts: 1,
      lastStatus: 422,
      bodyExcerpt: 'bad input',
    });
    expect(t.sent).toHaveLength(1);
    expect(events.filter((e) => e.terminal).map((e) => e.event)).toEqual(['app-rejected']);
  });

  it('5xx then 2xx → success on attempt 2 after min_seconds', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok(503), ok(200)]);
    const r = await runFire(input(), { transport: t, clock });
    expect(r).toMatchObject({ outcome: 'success', attempts: 2, lastStatus: 200 });
    expect(clock.sleeps).toEqual([1000]);
  });

  it('retries exhausted with the exact capped exponential backoff', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [
      ok(500),
      { kind: 'timeout' },
      { kind: 'network-error', message: 'ECONNRESET' },
      ok(502),
    ]);
    const events: FireEvent[] = [];
    const r = await runFire(input(), { transport: t, clock, onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({ outcome: 'retries-exhausted', attempts: 4, lastStatus: 502 });
    expect(clock.sleeps).toEqual([1000, 2000, 3000]); // min(1·2^(n−1), 3)
    expect(events.map((e) => e.event)).toEqual([
      'attempt',
      'server-error',
      'attempt',
      'attempt-failed',
      'attempt',
      'attempt-failed',
      'attempt',
      'server-error',
      'retries-exhausted',
    ]);
    expect(events.filter((e) => e.terminal)).toHaveLength(1);
    expect(t.options.every((o) => o.timeoutMs === 5000 && o.maxBodyBytes === 65536)).toBe(true);
  });

  it('sets every header; Run-Id and Run-Key constant, attempt counts up, each signature fresh and valid', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok(500), ok(500), ok(200)]);
    await runFire(input(), { transport: t, clock });
    const stamps: number[] = [];
    t.sent.forEach((req, i) => {
      const h = req.headers;
      expect(h['X-Cron-Run-Id']).toBe('01928f7e-0000-7000-8000-000000000000');
      expect(h['X-Cron-Run-Key']).toBe('billing/settle#2026-01-01T00:00:00Z#0123456789abcdef');
      expect(h['Idempotency-Key']).toBe(h['X-Cron-Run-Key']);
      expect(h['X-Cron-Schedule-Name']).toBe('settle');
      expect(h['X-Cron-Fire-Time']).toBe(String(Date.UTC(2026, 0, 1) / 1000));
      expect(h['X-Cron-Fire-Time-Actual']).toBe(String(Date.UTC(2026, 0, 1) / 1000 + 1));
      expect(h['X-Cron-Attempt']).toBe(String(i + 1));
      expect(h['X-Cron-Previous-Success-Time']).toBe(String(Date.UTC(2025, 11, 31, 23, 50) / 1000));
      expect(h['traceparent']).toMatch(/^00-01928f7e000070008000000000000000-[0-9a-f]{16}-01$/);
      const sig = h['X-Cron-Signature'] as string;
      const v = verify({
        header: sig,
        secrets: ['s3cret'],
        method: 'POST',
        path: '/run?x=1',
        body: '{"a":1}',
        now: clock.now() / 1000,
      });
      expect(v.ok).toBe(true);
      stamps.push(Number(/t=(\d+)/.exec(sig)?.[1]));
    });
    expect(stamps[1]).toBeGreaterThan(stamps[0] as number);
    expect(stamps[2]).toBeGreaterThan(stamps[1] as number);
  });

  it('static headers cannot override X-Cron-* or the other injected headers, in any letter case', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok()]);
    const j = job(
      {},
      {
        'x-cron-run-id': 'evil',
        'X-CRON-ATTEMPT': '99',
        'idempotency-key': 'k',
        Accept: 'application/json',
      },
    );
    await runFire(input(j), { transport: t, clock });
    const h = t.sent[0]?.headers ?? {};
    const names = Object.keys(h).map((n) => n.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
    expect(h['X-Cron-Run-Id']).toBe('01928f7e-0000-7000-8000-000000000000');
    expect(h['X-Cron-Attempt']).toBe('1');
    expect(h['Accept']).toBe('application/json');
  });

  it('a guard is taken before and released after every attempt; contention stops the fire', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok(500), ok(500)]);
    const log: string[] = [];
    const guard: AttemptGuard = {
      async acquire(attempt) {
        log.push(`acquire ${attempt}`);
        if (attempt === 3)
          return { ok: false, outcome: 'lock-contended', message: 'held by pid 1' };
        return {
          ok: true,
          fencingToken: 10 + attempt,
          release: async () => void log.push(`release ${attempt}`),
        };
      },
    };
    const events: FireEvent[] = [];
    const r = await runFire(input(), {
      transport: t,
      clock,
      guard,
      onEvent: (e) => events.push(e),
    });
    expect(log).toEqual(['acquire 1', 'release 1', 'acquire 2', 'release 2', 'acquire 3']);
    expect(r).toMatchObject({ outcome: 'lock-contended', attempts: 2, fencingToken: 12 });
    expect(t.sent.map((s) => s.headers['X-Cron-Fencing-Token'])).toEqual(['11', '12']);
    expect(events.at(-1)).toMatchObject({ event: 'lock-contended', terminal: true });
  });

  it('records the ending outcome before the hold is released, once, on the ending attempt only', async () => {
    for (const [script, ending, attempts] of [
      [[ok(500), ok(200)], 'success', 2],
      [[ok(500), ok(404)], 'app-rejected', 2],
      [[ok(500), ok(500), ok(500), ok(500)], 'retries-exhausted', 4],
    ] as const) {
      const clock = new FakeClock();
      const t = scripted(clock, [...script]);
      const log: string[] = [];
      const guard: AttemptGuard = {
        async acquire(attempt) {
          log.push(`acquire ${attempt}`);
          return { ok: true, release: async () => void log.push(`release ${attempt}`) };
        },
      };
      const r = await runFire(input(), {
        transport: t,
        clock,
        guard,
        record: (e) => void log.push(`record ${e.outcome} ${e.attempt} ${e.status}`),
      });
      expect(r).toMatchObject({ outcome: ending, attempts });
      const last = log.slice(-3);
      expect(last).toEqual([
        `acquire ${attempts}`,
        `record ${ending} ${attempts} ${script[attempts - 1]?.kind === 'response' ? (script[attempts - 1] as { status: number }).status : undefined}`,
        `release ${attempts}`,
      ]);
      expect(log.filter((l) => l.startsWith('record'))).toHaveLength(1);
    }
  });

  it('a failed record is one non-terminal record-failed event before the single terminal success', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok()]);
    const events: FireEvent[] = [];
    const r = await runFire(input(), {
      transport: t,
      clock,
      onEvent: (e) => events.push(e),
      record: () => Promise.reject(new Error('redis at h:6379 unavailable during markSucceeded')),
    });
    expect(r.outcome).toBe('success');
    expect(events.map((e) => [e.event, e.terminal])).toEqual([
      ['attempt', false],
      ['record-failed', false],
      ['success', true],
    ]);
    expect(events[1]?.err).toBe('redis at h:6379 unavailable during markSucceeded');
  });

  it('a stopped or refused fire records nothing', async () => {
    const clock = new FakeClock();
    const recorded: string[] = [];
    const controller = new AbortController();
    const t: Transport = {
      async send() {
        controller.abort();
        return { kind: 'aborted' };
      },
    };
    await runFire(input(), {
      transport: t,
      clock,
      signal: controller.signal,
      record: (e) => void recorded.push(e.outcome),
    });
    await runFire(input(), {
      transport: scripted(clock, [ok()]),
      clock,
      guard: { acquire: async () => ({ ok: false, outcome: 'lock-contended', message: 'x' }) },
      record: (e) => void recorded.push(e.outcome),
    });
    expect(recorded).toEqual([]);
  });

  it('a duplicate run key found by the guard sends nothing', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [ok()]);
    const r = await runFire(input(), {
      transport: t,
      clock,
      guard: {
        acquire: async () => ({
          ok: false,
          outcome: 'duplicate',
          message: 'run key already succeeded',
        }),
      },
    });
    expect(r.outcome).toBe('duplicate');
    expect(t.sent).toHaveLength(0);
  });

  it("an app's X-Cron-Run-Once: duplicate on a 2xx ends the fire duplicate; the key is recorded done", async () => {
    const answered = (status: number, runOnce: string) =>
      ({ kind: 'response', status, bodyExcerpt: '{}', runOnce }) as const;
    for (const [answer, outcome, terminal] of [
      [answered(200, 'duplicate'), 'duplicate', 'duplicate-suppressed'],
      [answered(200, 'executed'), 'success', 'success'],
      // the header means nothing on a refusal: a stale fence is the app's 409
      [answered(409, 'duplicate'), 'app-rejected', 'app-rejected'],
    ] as const) {
      const clock = new FakeClock();
      const t = scripted(clock, [answer]);
      const events: FireEvent[] = [];
      const recorded: string[] = [];
      const r = await runFire(input(), {
        transport: t,
        clock,
        onEvent: (e) => events.push(e),
        record: (e) => void recorded.push(e.outcome),
      });
      expect(r).toMatchObject({ outcome, attempts: 1, lastStatus: answer.status });
      expect(events.filter((e) => e.terminal).map((e) => e.event)).toEqual([terminal]);
      // "record before release": whoever takes the key next must see it done, not retry it
      expect(recorded).toEqual([outcome === 'app-rejected' ? 'app-rejected' : 'success']);
    }
  });

  it('an abort during the backoff stops the fire', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const t: Transport = {
      async send() {
        controller.abort();
        return ok(503);
      },
    };
    const r = await runFire(input(), { transport: t, clock, signal: controller.signal });
    expect(r).toMatchObject({ outcome: 'stopped', attempts: 1 });
  });

  it('an aborted attempt (transport reports aborted) ends stopped', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const t: Transport = {
      async send(_req, opts) {
        controller.abort();
        expect(opts.signal?.aborted).toBe(true);
        return { kind: 'aborted' };
      },
    };
    const r = await runFire(input(), { transport: t, clock, signal: controller.signal });
    expect(r.outcome).toBe('stopped');
  });

  it('a 3xx is not followed and not retried', async () => {
    const clock = new FakeClock();
    const t = scripted(clock, [
      { kind: 'response', status: 302, bodyExcerpt: '', location: '/elsewhere' },
    ]);
    const r = await runFire(input(), { transport: t, clock });
    expect(r).toMatchObject({ outcome: 'app-rejected', attempts: 1, lastStatus: 302 });
  });
});
