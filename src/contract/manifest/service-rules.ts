/**
 * Rules of `services` (SPEC §17) that JSON Schema cannot say well: the command rules of §11 that
 * apply to a service (argv[0], absolute cwd, reserved and doubled variables), restart
 * `min_seconds ≤ max_seconds`, exactly one readiness check and a usable address for every
 * instance, notify entries that name a notifier and only `failed`/`recovered`, a name not used
 * by a job, and `jobs` 1..256 unless services are present. Walks the raw value defensively.
 */
import {
  INSTANCE_PLACEHOLDER,
  LIMITS,
  SERVICE_DEFAULTS,
  SERVICE_NOTIFY_EVENTS,
} from './defaults.js';
import { checkCommand } from './command-rules.js';
import { childPath, isRecord, own, quote } from './describe.js';
import { checkUrl } from './request-rules.js';

type Add = (path: string, message: string) => void;

/** An address with `{instance}` replaced by `index`. */
export function readyAddress(template: string, index: number): string {
  return template.split(INSTANCE_PLACEHOLDER).join(String(index));
}

/** Parses `HOST:PORT` (`[v6]:PORT`); null when it is not one. */
export function parseHostPort(text: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:/[\]]+)):([0-9]{1,5})$/.exec(text);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1] ?? m[2] ?? '', port };
}

function checkRestart(add: Add, restart: unknown, path: string): void {
  if (!isRecord(restart)) return;
  const rawMin = own(restart, 'min_seconds');
  const rawMax = own(restart, 'max_seconds');
  const min = typeof rawMin === 'number' ? rawMin : SERVICE_DEFAULTS.min_seconds;
  const max = typeof rawMax === 'number' ? rawMax : SERVICE_DEFAULTS.max_seconds;
  if (min <= max) return;
  const minText = rawMin === undefined ? `${min} (the default)` : String(min);
  const maxText = rawMax === undefined ? `${max} (the default)` : String(max);
  add(
    path,
    `expected min_seconds ≤ max_seconds, found min_seconds ${minText} > max_seconds ${maxText}`,
  );
}

function checkReady(add: Add, ready: unknown, path: string, instances: number): void {
  if (!isRecord(ready)) return;
  const http = own(ready, 'http_get');
  const tcp = own(ready, 'tcp');
  if (http === undefined && tcp === undefined)
    add(path, 'expected exactly one of "http_get" and "tcp", found neither');
  else if (http !== undefined && tcp !== undefined)
    add(path, 'expected exactly one of "http_get" and "tcp", found both; keep one');
  // every instance's address must be usable, not only the first one's
  const indexes = instances > 1 ? [0, instances - 1] : [0];
  if (typeof http === 'string')
    for (const i of indexes) {
      const problem = checkUrl(readyAddress(http, i));
      if (problem !== null) {
        add(
          childPath(path, 'http_get'),
          `${problem}${http.includes(INSTANCE_PLACEHOLDER) ? ` (instance ${i})` : ''}`,
        );
        break;
      }
    }
  if (typeof tcp === 'string')
    for (const i of indexes) {
      const address = readyAddress(tcp, i);
      if (parseHostPort(address) === null) {
        add(
          childPath(path, 'tcp'),
          `expected HOST:PORT with a port from 1 to 65535 (an IPv6 address in brackets: [::1]:8080), found ${quote(address)}${tcp.includes(INSTANCE_PLACEHOLDER) ? ` for instance ${i}` : ''}`,
        );
        break;
      }
    }
}

function checkNotify(add: Add, notify: unknown, path: string, defined: ReadonlySet<string>): void {
  if (!Array.isArray(notify)) return;
  const seen = new Map<string, number>();
  notify.forEach((entry: unknown, k) => {
    if (!isRecord(entry)) return;
    const at = childPath(path, k);
    const to = own(entry, 'to');
    if (typeof to === 'string') {
      if (!defined.has(to)) {
        const list = [...defined].sort();
        add(
          childPath(at, 'to'),
          `notifier ${quote(to)} is not defined in "notifiers"` +
            (list.length > 0 ? ` (defined: ${list.join(', ')})` : '; add it there'),
        );
      }
      const first = seen.get(to);
      if (first === undefined) seen.set(to, k);
      else
        add(
          childPath(at, 'to'),
          `duplicate notify entry for ${quote(to)}: notify/${first} already sends to it; merge them`,
        );
    }
    const on = own(entry, 'on');
    if (Array.isArray(on))
      on.forEach((event: unknown, e) => {
        if (event === 'missed' || event === 'slow')
          add(
            childPath(childPath(at, 'on'), e),
            `a service notifies ${SERVICE_NOTIFY_EVENTS.map((x) => `"${x}"`).join(' and ')} only (a crash loop and its end), found ${quote(event)}; remove it`,
          );
      });
    if (own(entry, 'slow_after_seconds') !== undefined)
      add(
        childPath(at, 'slow_after_seconds'),
        'slow_after_seconds does not apply to a service (it has no end to wait for); remove it',
      );
  });
}

/** Whether an untrusted manifest value has at least one service. */
export function hasServices(raw: unknown): boolean {
  const services = own(raw, 'services');
  return isRecord(services) && Object.keys(services).length > 0;
}

/** The `jobs` rule that depends on `services`: 1..256 jobs unless services are present. */
function checkJobCount(add: Add, raw: unknown, withServices: boolean): void {
  if (withServices || !isRecord(raw)) return;
  const jobs = own(raw, 'jobs');
  const range = `${LIMITS.jobs.min} to ${LIMITS.jobs.max}`;
  if (jobs === undefined)
    add('jobs', `required field is missing (expected an array of ${range} entries)`);
  else if (Array.isArray(jobs) && jobs.length === 0)
    add(
      'jobs',
      `expected an array of ${range} entries, found an empty array (a manifest without jobs needs "services")`,
    );
}

/** Every service rule of an untrusted manifest value. */
export function checkServices(add: Add, raw: unknown): void {
  const services = own(raw, 'services');
  const names = isRecord(services) ? Object.keys(services) : [];
  checkJobCount(add, raw, names.length > 0);
  if (!isRecord(services)) return;
  const notifiers = own(raw, 'notifiers');
  const defined = new Set(isRecord(notifiers) ? Object.keys(notifiers) : []);
  const jobs = own(raw, 'jobs');
  const jobNames = new Map<string, number>();
  if (Array.isArray(jobs))
    jobs.slice(0, LIMITS.jobs.max).forEach((job: unknown, i) => {
      const name = own(job, 'name');
      if (typeof name === 'string' && !jobNames.has(name)) jobNames.set(name, i);
    });
  for (const name of names.slice(0, LIMITS.services.max)) {
    const service = services[name];
    if (!isRecord(service)) continue;
    const path = childPath('services', name);
    const job = jobNames.get(name);
    if (job !== undefined)
      add(
        path,
        `service name ${quote(name)} is also the name of jobs/${job}; jobs and services share one namespace (their runs are listed by name), rename one`,
      );
    // argv, cwd and env follow the command rules of §11 (a service has no exit codes to check)
    checkCommand(add, service, path);
    checkRestart(add, own(service, 'restart'), childPath(path, 'restart'));
    const instances = own(service, 'instances');
    const count =
      typeof instances === 'number' &&
      Number.isInteger(instances) &&
      instances >= LIMITS.instances.min &&
      instances <= LIMITS.instances.max
        ? instances
        : SERVICE_DEFAULTS.instances;
    checkReady(add, own(service, 'ready'), childPath(path, 'ready'), count);
    checkNotify(add, own(service, 'notify'), childPath(path, 'notify'), defined);
  }
}
