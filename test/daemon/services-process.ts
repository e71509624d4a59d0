/**
 * Helpers of the services' process tests: a manifest dir with services, and the processes of an
 * instance counted from `/proc` (its environment says which service and instance it is; its
 * command line tells the worker from the lifeline's watcher).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/common.js';

/** Writes `<dir>/manifest.json` with `services` (and no jobs). */
export function writeServices(
  dir: string,
  services: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): void {
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ version: 1, app: 'shop', services, ...extra }),
  );
}

/** A temp dir with a services manifest. */
export function servicesDir(services: Record<string, unknown>, extra = {}): string {
  const dir = tempDir('services');
  writeServices(dir, services, extra);
  return dir;
}

/** A live process of a service: its pid, instance and command line. */
export interface ServiceProcess {
  pid: number;
  service: string;
  instance: number;
  cmdline: string[];
}

function read(path: string, encoding: BufferEncoding = 'utf8'): string | null {
  try {
    return readFileSync(path, encoding);
  } catch {
    return null;
  }
}

/**
 * Whether `pid` is a live process: a zombie is not (a SIGKILLed daemon's children are reparented
 * to PID 1, which here reaps them when it gets to it; `kill(pid, 0)` still succeeds on one).
 */
export function isLive(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  return stat !== null && !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** Live (non-zombie) processes whose environment names a service, read from `/proc`. */
export function serviceProcesses(marker: string): ServiceProcess[] {
  const out: ServiceProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = read(`/proc/${name}/environ`, 'latin1');
    if (environ === null || !environ.includes(marker)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
    const env = new Map(
      environ
        .split('\0')
        .filter((e) => e.includes('='))
        .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)] as const),
    );
    const service = env.get('CRONIX_SERVICE');
    const instance = env.get('CRONIX_INSTANCE');
    if (service === undefined || instance === undefined) continue;
    out.push({
      pid: Number(name),
      service,
      instance: Number(instance),
      cmdline: (read(`/proc/${name}/cmdline`) ?? '').split('\0').filter((a) => a !== ''),
    });
  }
  return out;
}

/** The workers (not the watchers) of a service whose argv ends with `tag`, by instance. */
export function workers(marker: string, service: string, tag: string): Map<number, number[]> {
  const byInstance = new Map<number, number[]>();
  for (const p of serviceProcesses(marker))
    if (p.service === service && p.cmdline.at(-1) === tag && !p.cmdline.includes('-c'))
      byInstance.set(p.instance, [...(byInstance.get(p.instance) ?? []), p.pid]);
  return byInstance;
}
