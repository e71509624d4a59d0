/**
 * `services` in the manifest (SPEC §17): services-only manifests, the rules and their messages
 * (slash paths, what was expected and found, every problem at once), normalization, the
 * canonical form and the effective defaults; the host backends' refusal.
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalize,
  effectiveService,
  parseManifest,
  type Manifest,
} from '../../src/contract/manifest/index.js';
import { serviceRefusals } from '../../src/reconcile/services.js';

const job = { name: 'settle', schedule: '@hourly', command: { argv: ['/bin/true'] } };

function valid(raw: unknown): Manifest {
  const r = parseManifest(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.manifest;
}

function errors(raw: unknown): { path: string; message: string }[] {
  const r = parseManifest(raw);
  if (r.ok) throw new Error('expected errors');
  return r.errors;
}

describe('services in the manifest', () => {
  it('allows a services-only manifest (no jobs, or an empty list) and keeps 1..256 jobs otherwise', () => {
    const m = valid({
      version: 1,
      app: 'shop',
      services: { worker: { argv: ['/bin/sleep', '9'] } },
    });
    expect(m.jobs).toEqual([]);
    expect(m.services).toEqual({ worker: { argv: ['/bin/sleep', '9'] } });
    valid({ version: 1, app: 'shop', jobs: [], services: { worker: { argv: ['w'] } } });
    expect(errors({ version: 1, app: 'shop', jobs: [] })).toEqual([
      {
        path: 'jobs',
        message:
          'expected an array of 1 to 256 entries, found an empty array (a manifest without jobs needs "services")',
      },
    ]);
    expect(errors({ version: 1, app: 'shop', services: {} })).toEqual([
      {
        path: 'jobs',
        message: 'required field is missing (expected an array of 1 to 256 entries)',
      },
    ]);
  });

  const table: { name: string; service: Record<string, unknown>; path: string; message: RegExp }[] =
    [
      {
        name: 'instances above 64',
        service: { argv: ['w'], instances: 65 },
        path: 'services/w/instances',
        message: /expected an integer from 1 to 64, found 65/,
      },
      {
        name: 'instances 0',
        service: { argv: ['w'], instances: 0 },
        path: 'services/w/instances',
        message: /from 1 to 64, found 0/,
      },
      {
        name: 'empty argv[0]',
        service: { argv: [''] },
        path: 'services/w/argv/0',
        message: /expected the program to run/,
      },
      {
        name: 'relative cwd',
        service: { argv: ['w'], cwd: 'srv' },
        path: 'services/w/cwd',
        message: /absolute directory.*found "srv"/,
      },
      {
        name: 'reserved variable',
        service: { argv: ['w'], env: { CRONIX_INSTANCE: '1' } },
        path: 'services/w/env/CRONIX_INSTANCE',
        message: /reserved/,
      },
      {
        name: 'min above max',
        service: { argv: ['w'], restart: { min_seconds: 90 } },
        path: 'services/w/restart',
        message: /min_seconds 90 > max_seconds 60 \(the default\)/,
      },
      {
        name: 'both checks',
        service: { argv: ['w'], ready: { tcp: '127.0.0.1:80', http_get: 'http://127.0.0.1/' } },
        path: 'services/w/ready',
        message: /exactly one of "http_get" and "tcp", found both/,
      },
      {
        name: 'no check',
        service: { argv: ['w'], ready: { timeout_seconds: 5 } },
        path: 'services/w/ready',
        message: /found neither/,
      },
      {
        name: 'bad URL',
        service: { argv: ['w'], ready: { http_get: 'ftp://x/' } },
        path: 'services/w/ready/http_get',
        message: /http:\/\/ or https:\/\/ URL/,
      },
      {
        name: 'port out of range for the last instance',
        service: { argv: ['w'], instances: 10, ready: { tcp: '127.0.0.1:6553{instance}' } },
        path: 'services/w/ready/tcp',
        message: /found "127.0.0.1:65539" for instance 9/,
      },
      {
        name: 'no port',
        service: { argv: ['w'], ready: { tcp: 'localhost' } },
        path: 'services/w/ready/tcp',
        message: /HOST:PORT.*found "localhost"/,
      },
      {
        name: 'unknown field',
        service: { argv: ['w'], replicas: 2 },
        path: 'services/w/replicas',
        message: /unknown field "replicas"/,
      },
      {
        name: 'notify missed',
        service: { argv: ['w'], notify: [{ to: 'ops', on: ['failed', 'missed'] }] },
        path: 'services/w/notify/0/on/1',
        message: /"failed" and "recovered" only/,
      },
      {
        name: 'undefined notifier',
        service: { argv: ['w'], notify: [{ to: 'pager' }] },
        path: 'services/w/notify/0/to',
        message: /notifier "pager" is not defined/,
      },
      {
        name: 'crash loop of one exit',
        service: { argv: ['w'], restart: { crash_loop_exits: 1 } },
        path: 'services/w/restart/crash_loop_exits',
        message: /from 2 to 100, found 1/,
      },
    ];
  it.each(table)('refuses $name at its path', ({ service, path, message }) => {
    const found = errors({
      version: 1,
      app: 'shop',
      notifiers: { ops: { type: 'webhook', url: 'https://hooks.example/x' } },
      services: { w: service },
    });
    expect(found.map((e) => e.path)).toContain(path);
    expect(found.find((e) => e.path === path)?.message).toMatch(message);
  });

  it('reports every problem at once and a name shared with a job at the service', () => {
    const found = errors({
      version: 1,
      app: 'shop',
      jobs: [job],
      services: { settle: { argv: [''], instances: 99 }, 'Bad Name': { argv: ['x'] } },
    });
    expect(found.map((e) => e.path)).toEqual([
      'services/Bad Name',
      'services/settle',
      'services/settle/argv/0',
      'services/settle/instances',
    ]);
    expect(found[1]?.message).toMatch(/also the name of jobs\/0/);
  });

  it('normalizes (sorted names and maps, empty parts dropped) and canonicalizes after the jobs', () => {
    const m = valid({
      version: 1,
      app: 'shop',
      jobs: [job],
      services: {
        web: {
          argv: ['/srv/web'],
          env: { B: '2', A: '1' },
          restart: {},
          ready: { tcp: '127.0.0.1:80{instance}' },
          instances: 2,
        },
        api: { argv: ['/srv/api'], notify: [] },
      },
    });
    expect(Object.keys(m.services ?? {})).toEqual(['api', 'web']);
    expect(canonicalize(m)).toMatch(
      /"jobs":\[.*\],"services":\{"api":\{"argv":\["\/srv\/api"\]\},"web":\{"argv":\["\/srv\/web"\],"env":\{"A":"1","B":"2"\},"instances":2,"ready":\{"tcp":"127.0.0.1:80\{instance\}"\}\}\}\}$/,
    );
    // the canonical form parses back to the same manifest
    expect(valid(JSON.parse(canonicalize(m)))).toEqual(m);
  });

  it('fills the defaults of SPEC §17 (a crash loop = 3 exits within 60 s)', () => {
    const m = valid({ version: 1, app: 'shop', services: { w: { argv: ['w'] } } });
    expect(effectiveService(m.services!['w']!)).toEqual({
      argv: ['w'],
      env: {},
      env_from_secrets: {},
      cwd: null,
      instances: 1,
      restart: {
        min_seconds: 1,
        max_seconds: 60,
        reset_after_seconds: 60,
        crash_loop_exits: 3,
        crash_loop_window_seconds: 60,
      },
      graceful_stop_seconds: 10,
      max_output_bytes: 1048576,
      ready: null,
      notify: [],
    });
  });

  it('is refused by the host backends, one reason per service', () => {
    const m = valid({ version: 1, app: 'shop', jobs: [job], services: { w: { argv: ['w'] } } });
    const refused = serviceRefusals(m, 'crontab');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.id).toBe('services/w');
    expect(refused[0]?.reasons[0]).toMatch(/runs only under cronix serve.*crontab backend/);
    expect(serviceRefusals(valid({ version: 1, app: 'shop', jobs: [job] }), 'systemd')).toEqual([]);
  });
});
