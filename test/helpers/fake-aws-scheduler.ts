/**
 * A local stand-in for the EventBridge Scheduler API, speaking the service's REST-JSON
 * protocol as the official `@aws-sdk/client-scheduler` sends it (wire shapes taken from the
 * SDK's schema: `GET /schedules?ScheduleGroup=&NamePrefix=&NextToken=&MaxResults=`,
 * `GET|POST|PUT|DELETE /schedules/{Name}` with `groupName` in the query or body). It keeps
 * schedules in memory per group, records every request, validates schedule expressions with
 * AWS's rules (so a translation bug fails here, not in production) and can be told to fail.
 * Point the real SDK at it with `AWS_ENDPOINT_URL=<url>` and dummy credentials.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One schedule as the fake stores it (the fields cronix sends, plus bookkeeping). */
export interface FakeSchedule {
  Name: string;
  GroupName: string;
  Arn: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  Description?: string;
  State: string;
  StartDate?: number;
  FlexibleTimeWindow: { Mode: string; MaximumWindowInMinutes?: number };
  Target: Record<string, unknown> & { Arn: string; RoleArn: string; Input?: string };
  CreationDate: number;
  LastModificationDate: number;
}

/** One request as it arrived. */
export interface FakeRequest {
  method: string;
  /** Path without the query, e.g. `/schedules/cronix-app-job-0`. */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON body, or null when there was none. */
  body: Record<string, unknown> | null;
  /** The SDK operation this request maps to. */
  op: 'ListSchedules' | 'GetSchedule' | 'CreateSchedule' | 'UpdateSchedule' | 'DeleteSchedule';
}

/** A scripted failure: answered instead of the real operation. */
export interface FakeFailure {
  status: number;
  /** Error type sent in `x-amzn-errortype`, e.g. `AccessDeniedException`. */
  type: string;
  message: string;
}

/** Handle on a running fake. */
export interface FakeAwsScheduler {
  url: string;
  requests: FakeRequest[];
  /** Requests that change state (create, update, delete). */
  writes(): FakeRequest[];
  /** Schedules of `group` (default `default`) by name. */
  schedules(group?: string): Map<string, FakeSchedule>;
  /** Seeds a schedule directly (not recorded), e.g. a foreign one. */
  seed(schedule: Partial<FakeSchedule> & { Name: string; ScheduleExpression: string }): void;
  /** Makes every later request of `op` fail (until cleared with `null`). */
  failOp(op: FakeRequest['op'], failure: FakeFailure | null): void;
  /** Forgets recorded requests. */
  clearRequests(): void;
  close(): Promise<void>;
}

const FIELD_RE: readonly RegExp[] = [
  /^(\*|\d{1,2}(-\d{1,2})?(\/\d{1,2})?)(,\d{1,2}(-\d{1,2})?(\/\d{1,2})?)*$/, // minutes
  /^(\*|\d{1,2}(-\d{1,2})?(\/\d{1,2})?)(,\d{1,2}(-\d{1,2})?(\/\d{1,2})?)*$/, // hours
  /^(\*|\?|\d{1,2}(-\d{1,2})?(\/\d{1,2})?(,\d{1,2}(-\d{1,2})?(\/\d{1,2})?)*)$/, // day-of-month
  /^(\*|\d{1,2}(-\d{1,2})?(\/\d{1,2})?)(,\d{1,2}(-\d{1,2})?(\/\d{1,2})?)*$/, // month
  /^(\*|\?|[1-7](-[1-7])?(,[1-7](-[1-7])?)*)$/, // day-of-week: no steps
  /^\*$/, // year (cronix always sends *)
];
const FIELD_MAX = [59, 23, 31, 12, 7];
const FIELD_MIN = [0, 0, 1, 1, 1];

/** Why AWS would reject `expression`, or null (the subset of the grammar cronix emits). */
export function awsExpressionProblem(expression: string): string | null {
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (rate) {
    const n = Number(rate[1]);
    const plural = (rate[2] as string).endsWith('s');
    if (n < 1) return 'rate value must be positive';
    if ((n === 1) === plural) return 'rate unit must be singular for 1 and plural otherwise';
    return null;
  }
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (!cron) return 'expression must be cron(...), rate(...) or at(...)';
  const fields = (cron[1] as string).split(' ');
  if (fields.length !== 6) return 'cron expression must have 6 fields';
  for (let i = 0; i < 6; i++) {
    const f = fields[i] as string;
    if (!(FIELD_RE[i] as RegExp).test(f)) return `field ${i + 1} "${f}" is not valid`;
    if (i < 5) {
      for (const n of f.match(/\d+/g) ?? []) {
        const isStep = f.includes(`/${n}`);
        if (
          !isStep &&
          (Number(n) < (FIELD_MIN[i] as number) || Number(n) > (FIELD_MAX[i] as number))
        )
          return `field ${i + 1} value ${n} out of range`;
      }
    }
  }
  if ((fields[2] === '?') === (fields[4] === '?'))
    return 'exactly one of day-of-month and day-of-week must be ?';
  return null;
}

function sendJson(res: ServerResponse, status: number, body: unknown, type?: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (type) headers['x-amzn-errortype'] = type;
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? null : (JSON.parse(text) as Record<string, unknown>);
}

/**
 * Starts the fake on a random loopback port. `pageSize` caps ListSchedules pages (small by
 * default, so pagination is exercised).
 */
export async function startFakeAwsScheduler(
  options: { pageSize?: number } = {},
): Promise<FakeAwsScheduler> {
  const pageSize = options.pageSize ?? 2;
  const groups = new Map<string, Map<string, FakeSchedule>>();
  const requests: FakeRequest[] = [];
  const failures = new Map<FakeRequest['op'], FakeFailure>();
  const group = (name: string): Map<string, FakeSchedule> => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = new Map()));
    return g;
  };
  const arnOf = (g: string, n: string): string =>
    `arn:aws:scheduler:us-east-1:123456789012:schedule/${g}/${n}`;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const body = await readBody(req);
    const m = /^\/schedules(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m)
      return sendJson(
        res,
        404,
        { Message: `no route ${url.pathname}` },
        'UnknownOperationException',
      );
    const name = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const op: FakeRequest['op'] | undefined =
      name === undefined
        ? req.method === 'GET'
          ? 'ListSchedules'
          : undefined
        : (
            {
              GET: 'GetSchedule',
              POST: 'CreateSchedule',
              PUT: 'UpdateSchedule',
              DELETE: 'DeleteSchedule',
            } as const
          )[req.method as 'GET'];
    if (!op) return sendJson(res, 405, { Message: 'method not allowed' }, 'ValidationException');
    requests.push({ method: req.method ?? '', path: url.pathname, query, body, op });
    const failure = failures.get(op);
    if (failure) return sendJson(res, failure.status, { Message: failure.message }, failure.type);

    if (op === 'ListSchedules') {
      const g = group(query['ScheduleGroup'] ?? 'default');
      const prefix = query['NamePrefix'] ?? '';
      const all = [...g.values()]
        .filter((s) => s.Name.startsWith(prefix))
        .sort((a, b) => a.Name.localeCompare(b.Name));
      const start = Number(query['NextToken'] ?? 0);
      const size = Math.min(pageSize, Number(query['MaxResults'] ?? pageSize));
      const page = all.slice(start, start + size);
      const next = start + size < all.length ? String(start + size) : undefined;
      return sendJson(res, 200, {
        Schedules: page.map((s) => ({
          Arn: s.Arn,
          Name: s.Name,
          GroupName: s.GroupName,
          State: s.State,
          CreationDate: s.CreationDate,
          LastModificationDate: s.LastModificationDate,
          Target: { Arn: s.Target.Arn },
        })),
        ...(next ? { NextToken: next } : {}),
      });
    }
    const groupName = (
      op === 'GetSchedule' || op === 'DeleteSchedule' ? query['groupName'] : body?.['GroupName']
    ) as string | undefined;
    const g = group(groupName ?? 'default');
    const existing = g.get(name as string);
    if (op === 'GetSchedule') {
      if (!existing)
        return sendJson(
          res,
          404,
          { Message: `Schedule ${name} does not exist.` },
          'ResourceNotFoundException',
        );
      return sendJson(res, 200, existing);
    }
    if (op === 'DeleteSchedule') {
      if (!existing)
        return sendJson(
          res,
          404,
          { Message: `Schedule ${name} does not exist.` },
          'ResourceNotFoundException',
        );
      g.delete(name as string);
      return sendJson(res, 200, {});
    }
    // create / update
    if (op === 'CreateSchedule' && existing)
      return sendJson(
        res,
        409,
        { Message: `Schedule ${name} already exists.` },
        'ConflictException',
      );
    if (op === 'UpdateSchedule' && !existing)
      return sendJson(
        res,
        404,
        { Message: `Schedule ${name} does not exist.` },
        'ResourceNotFoundException',
      );
    const b = body ?? {};
    const expression = String(b['ScheduleExpression'] ?? '');
    const problem = awsExpressionProblem(expression);
    if (problem)
      return sendJson(
        res,
        400,
        { Message: `Invalid Schedule Expression ${expression}: ${problem}` },
        'ValidationException',
      );
    if (!b['Target'] || !b['FlexibleTimeWindow'])
      return sendJson(
        res,
        400,
        { Message: 'Target and FlexibleTimeWindow are required' },
        'ValidationException',
      );
    const now = Math.floor(Date.now() / 1000);
    const stored: FakeSchedule = {
      Name: name as string,
      GroupName: groupName ?? 'default',
      Arn: arnOf(groupName ?? 'default', name as string),
      ScheduleExpression: expression,
      State: String(b['State'] ?? 'ENABLED'),
      FlexibleTimeWindow: b['FlexibleTimeWindow'] as FakeSchedule['FlexibleTimeWindow'],
      Target: b['Target'] as FakeSchedule['Target'],
      CreationDate: existing?.CreationDate ?? now,
      LastModificationDate: now,
    };
    for (const k of ['ScheduleExpressionTimezone', 'Description', 'StartDate'] as const) {
      if (b[k] !== undefined) (stored as unknown as Record<string, unknown>)[k] = b[k];
    }
    g.set(stored.Name, stored);
    return sendJson(res, 200, { ScheduleArn: stored.Arn });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) =>
      sendJson(res, 500, { Message: String(err) }, 'InternalServerException'),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    writes: () => requests.filter((r) => r.method !== 'GET'),
    schedules: (name = 'default') => group(name),
    seed(s) {
      const g = s.GroupName ?? 'default';
      group(g).set(s.Name, {
        GroupName: g,
        Arn: arnOf(g, s.Name),
        State: 'ENABLED',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: 'arn:aws:lambda:us-east-1:123456789012:function:foreign',
          RoleArn: 'arn:aws:iam::123456789012:role/foreign',
        },
        CreationDate: 1_700_000_000,
        LastModificationDate: 1_700_000_000,
        ...s,
      });
    },
    failOp(op, failure) {
      if (failure) failures.set(op, failure);
      else failures.delete(op);
    },
    clearRequests() {
      requests.length = 0;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
