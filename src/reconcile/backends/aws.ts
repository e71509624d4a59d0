/**
 * The EventBridge Scheduler backend (SPEC §6, `--backend aws-scheduler`): one schedule per
 * (app, job, schedule index) named `cronix-<app>-<job>-<index>` in `--aws-schedule-group`,
 * through the official `@aws-sdk/client-scheduler`. Region from `--aws-region`; endpoint and
 * credentials from the SDK's standard environment variables (`AWS_ENDPOINT_URL[_SCHEDULER]`,
 * `AWS_ACCESS_KEY_ID`…, else its default provider chain), so any compatible endpoint works.
 * Ownership is the marker in `Description`; schedules without it are never read as ours,
 * changed or deleted. See docs/backends/aws-scheduler.md.
 */
import {
  CreateScheduleCommand,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
  type GetScheduleCommandOutput,
  type SchedulerClientConfig,
} from '@aws-sdk/client-scheduler';
import {
  BackendConfigError,
  BackendWriteError,
  entryId,
  type Backend,
  type ChangeSet,
  type DesiredEntry,
  type OwnedEntry,
} from '../backend.js';
import {
  parseMarker,
  refuseEntry,
  scheduleRequest,
  scheduleSum,
  targetInput,
  type AwsMarker,
  type AwsScheduleRequest,
  type AwsTargetConfig,
} from './aws-schedule.js';
import { isConflict, isNotFound, toBackendError } from './aws-errors.js';

/**
 * Options of {@link createAwsBackend}: the aws-scheduler subset of the CLI's `BackendOptions`
 * (declared here, not imported, so the factory module and this one do not import each other),
 * plus seams for tests.
 */
export interface AwsBackendOptions {
  /** The process environment: `AWS_REGION`, `AWS_ENDPOINT_URL[_SCHEDULER]`, credentials. */
  env: NodeJS.ProcessEnv;
  /** `--aws-region` (else `AWS_REGION` / `AWS_DEFAULT_REGION`, else the SDK's config files). */
  awsRegion?: string;
  /** `--aws-schedule-group` (default `default`). */
  awsScheduleGroup?: string;
  /** `--aws-target-arn`: what each fire invokes. */
  awsTargetArn?: string;
  /** `--aws-role-arn`: the role EventBridge Scheduler assumes to invoke the target. */
  awsRoleArn?: string;
  /** `--report-to` and its secret refs (SPEC §15): `--report-to` goes into the target input. */
  report?: { url: string };
  /** Clock (epoch ms) for `rate()` anchoring and the DST horizon; default `Date.now`. */
  now?: () => number;
  /** Extra SDK client settings (tests: `maxAttempts`). */
  clientConfig?: SchedulerClientConfig;
}

const ROLE_ARN_RE = /^arn:aws(-[a-z]+)?:iam::\d{12}:role\/[\w+=,.@/-]+$/;
const GROUP_RE = /^[0-9a-zA-Z._-]{1,64}$/;
/** Parallel GetSchedule calls while listing. */
const GET_CONCURRENCY = 8;

function clientConfigFrom(options: AwsBackendOptions): SchedulerClientConfig {
  const env = options.env;
  const config: SchedulerClientConfig = {
    // fail fast on a black-holed endpoint instead of hanging the CLI
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
  };
  const region = options.awsRegion ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (region) config.region = region;
  const endpoint =
    env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'] === 'true'
      ? undefined
      : (env['AWS_ENDPOINT_URL_SCHEDULER'] ?? env['AWS_ENDPOINT_URL']);
  if (endpoint) config.endpoint = endpoint;
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (accessKeyId && secretAccessKey) {
    const sessionToken = env['AWS_SESSION_TOKEN'];
    config.credentials = {
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
    };
  }
  return { ...config, ...options.clientConfig };
}

/** Runs `fn` over `items` with at most `limit` in flight, keeping order. */
async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The EventBridge Scheduler backend; see the module comment. */
export class AwsSchedulerBackend implements Backend {
  readonly name = 'aws-scheduler' as const;
  readonly target: string;
  private readonly client: SchedulerClient;
  private readonly config: AwsTargetConfig;
  private readonly now: () => number;

  constructor(options: AwsBackendOptions) {
    const group = options.awsScheduleGroup ?? 'default';
    if (!GROUP_RE.test(group)) {
      throw new BackendConfigError(
        `--aws-schedule-group "${group}" is not a valid schedule group name (1-64 of letters, digits, ".", "_", "-")`,
      );
    }
    if (options.awsRoleArn !== undefined && !ROLE_ARN_RE.test(options.awsRoleArn)) {
      throw new BackendConfigError(
        `--aws-role-arn "${options.awsRoleArn}" is not an IAM role ARN (expected arn:aws:iam::<12-digit account>:role/<name>)`,
      );
    }
    if (
      options.awsTargetArn !== undefined &&
      !/^arn:[^:\s]+:[^\s]{1,1590}$/.test(options.awsTargetArn)
    ) {
      throw new BackendConfigError(
        `--aws-target-arn "${options.awsTargetArn}" is not an ARN (expected arn:aws:…)`,
      );
    }
    // the SDK warns on Node < 22 about its own future support policy; not an operator concern here
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    const clientConfig = clientConfigFrom(options);
    this.client = new SchedulerClient(clientConfig);
    this.config = {
      group,
      ...(options.awsTargetArn !== undefined ? { targetArn: options.awsTargetArn } : {}),
      ...(options.awsRoleArn !== undefined ? { roleArn: options.awsRoleArn } : {}),
      ...(options.report !== undefined ? { reportTo: options.report.url } : {}),
    };
    this.now = options.now ?? Date.now;
    const where = typeof clientConfig.endpoint === 'string' ? ` at ${clientConfig.endpoint}` : '';
    this.target = `EventBridge Scheduler group ${group}${clientConfig.region ? ` (${String(clientConfig.region)})` : ''}${where}`;
  }

  /** See {@link Backend.refuse}. */
  refuse(entry: DesiredEntry): string[] {
    return refuseEntry(entry, this.now());
  }

  /** See {@link Backend.list}: ListSchedules (prefix `cronix-`), then GetSchedule per candidate. */
  async list(app?: string): Promise<OwnedEntry[]> {
    const prefix = app === undefined ? 'cronix-' : `cronix-${app}-`;
    const names: string[] = [];
    let token: string | undefined;
    do {
      const input = {
        GroupName: this.config.group,
        NamePrefix: prefix,
        MaxResults: 100,
        ...(token ? { NextToken: token } : {}),
      };
      let page;
      try {
        page = await this.client.send(new ListSchedulesCommand(input));
      } catch (err) {
        if (isNotFound(err)) return []; // no such group: nothing of ours in it
        throw this.error('ListSchedules', err);
      }
      for (const s of page.Schedules ?? []) if (s.Name) names.push(s.Name);
      token = page.NextToken;
    } while (token);
    const found = await mapLimit(names, GET_CONCURRENCY, (name) => this.get(name));
    const owned: OwnedEntry[] = [];
    for (const [i, s] of found.entries()) {
      const entry = s && this.ownedEntry(names[i] as string, s);
      if (entry && (app === undefined || entry.app === app)) owned.push(entry);
    }
    return owned;
  }

  /** See {@link Backend.apply}: DeleteSchedule, UpdateSchedule (full replacement), CreateSchedule. */
  async apply(changes: ChangeSet): Promise<void> {
    const now = this.now();
    const requests = new Map<string, AwsScheduleRequest>();
    const writes = [...changes.updates, ...changes.creates];
    if (writes.length > 0) this.requireTargetFlags();
    for (const entry of writes) {
      const r = scheduleRequest(entry, this.config, now);
      if (!r.ok) throw new BackendWriteError(`${entry.id}: ${r.reason}`);
      requests.set(entry.id, r.request);
    }
    for (const entry of changes.deletes) await this.delete(entry);
    for (const entry of changes.updates) {
      await this.update(requests.get(entry.id) as AwsScheduleRequest, entry);
    }
    for (const entry of changes.creates) {
      await this.create(requests.get(entry.id) as AwsScheduleRequest, entry);
    }
  }

  /** Creating or updating schedules needs both target flags (listing and deleting do not). */
  private requireTargetFlags(): void {
    if (!this.config.targetArn) {
      throw new BackendConfigError(
        '--aws-target-arn is required to create or update schedules: the ARN EventBridge Scheduler invokes at each fire (for example a Lambda function that runs cronix trigger)',
      );
    }
    if (!this.config.roleArn) {
      throw new BackendConfigError(
        '--aws-role-arn is required to create or update schedules: the IAM role EventBridge Scheduler assumes to invoke the target',
      );
    }
  }

  private error(op: string, err: unknown): Error {
    return toBackendError(op, err, this.target);
  }

  /** The schedule `name`, or null when there is none (it vanished between list and get). */
  private async get(name: string): Promise<GetScheduleCommandOutput | null> {
    try {
      return await this.client.send(
        new GetScheduleCommand({ Name: name, GroupName: this.config.group }),
      );
    } catch (err) {
      if (isNotFound(err)) return null;
      throw this.error('GetSchedule', err);
    }
  }

  /** Our entry for schedule `name`, or null when it does not carry our marker under our name. */
  private ownedEntry(name: string, s: GetScheduleCommandOutput): OwnedEntry | null {
    const marker = parseMarker(s.Description);
    if (!marker || entryId(marker.app, marker.job, marker.scheduleIndex) !== name) return null;
    const entry: OwnedEntry = {
      id: name,
      app: marker.app,
      job: marker.job,
      scheduleIndex: marker.scheduleIndex,
      hash: marker.hash,
    };
    const modified = this.modification(marker, s);
    if (modified) entry.modified = modified;
    return entry;
  }

  /** Why the installed schedule differs from what its marker claims, or null. */
  private modification(marker: AwsMarker, s: GetScheduleCommandOutput): string | null {
    if (scheduleSum(s) !== marker.sum) return 'edited outside cronix';
    if (this.config.targetArn !== undefined && s.Target?.Arn !== this.config.targetArn) {
      return 'target ARN differs from --aws-target-arn';
    }
    if (this.config.roleArn !== undefined && s.Target?.RoleArn !== this.config.roleArn) {
      return 'role ARN differs from --aws-role-arn';
    }
    const input = targetInput(marker.app, marker.job, marker.scheduleIndex, this.config.reportTo);
    if (s.Target?.Input !== input)
      return 'target input differs from the current flags (--report-to)';
    return null;
  }

  private async delete(entry: OwnedEntry): Promise<void> {
    // re-check ownership right before deleting: never delete a schedule without our marker
    const current = await this.get(entry.id);
    if (!current) return;
    if (!this.ownedEntry(entry.id, current)) {
      throw new BackendWriteError(
        `${entry.id}: the schedule in group ${this.config.group} does not carry the cronix marker; not deleting it`,
      );
    }
    try {
      await this.client.send(
        new DeleteScheduleCommand({ Name: entry.id, GroupName: this.config.group }),
      );
    } catch (err) {
      if (!isNotFound(err)) throw this.error('DeleteSchedule', err);
    }
  }

  private async update(request: AwsScheduleRequest, entry: DesiredEntry): Promise<void> {
    try {
      await this.client.send(new UpdateScheduleCommand(request));
    } catch (err) {
      if (!isNotFound(err)) throw this.error('UpdateSchedule', err);
      await this.create(request, entry); // deleted since the plan: converge by creating it
    }
  }

  private async create(request: AwsScheduleRequest, entry: DesiredEntry): Promise<void> {
    try {
      await this.client.send(new CreateScheduleCommand(request));
      return;
    } catch (err) {
      if (!isConflict(err)) throw this.error('CreateSchedule', err);
    }
    // the name is taken: by this very entry (an apply repeated after a failure) or by a stranger
    const current = await this.get(entry.id);
    const owned = current && this.ownedEntry(entry.id, current);
    if (!owned || owned.app !== entry.app) {
      throw new BackendWriteError(
        `${entry.id}: a schedule with this name already exists in group ${this.config.group} without the cronix marker; cronix never changes it. Rename or delete it, or use another --aws-schedule-group`,
      );
    }
    if (!owned.modified && current.Description === request.Description) return; // already as wanted
    try {
      await this.client.send(new UpdateScheduleCommand(request));
    } catch (err) {
      throw this.error('UpdateSchedule', err);
    }
  }
}

/**
 * Creates the EventBridge Scheduler backend from the command-line options.
 * @throws {BackendConfigError} naming the flag when `--aws-schedule-group`, `--aws-role-arn`
 *   or `--aws-target-arn` is malformed. Missing target/role flags are reported by `apply` only
 *   when it has schedules to write, so `list`, `show` and `prune` work without them.
 */
export function createAwsBackend(options: AwsBackendOptions): Backend {
  return new AwsSchedulerBackend(options);
}
