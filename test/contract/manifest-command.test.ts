/**
 * Command jobs in the manifest contract (SPEC §11): structure, semantic rules and their
 * messages, normalization, the canonical form (extension fields only when set) and the
 * effective defaults.
 */
import { describe, expect, it } from 'vitest';
import {
  attemptStopSeconds,
  canonicalize,
  changeHash,
  effectiveCommand,
  manifestWarnings,
} from '../../src/contract/manifest/index.js';
import { acceptManifest } from '../../src/contract/manifest/quick.js';
import { expectInvalid, expectValid, type Json } from './manifest-fixtures.js';

const C = 'jobs/0/command';

/** A manifest with one command job `a`, its command extended by `command`. */
function withCommand(command: Record<string, Json>, job: Record<string, Json> = {}): Json {
  return {
    version: 1,
    app: 'app',
    jobs: [
      { name: 'a', schedule: '@hourly', command: { argv: ['/bin/true'], ...command }, ...job },
    ],
  };
}

/** The errors at `path` of an invalid manifest. */
function errorsAt(raw: Json, path: string): string[] {
  return expectInvalid(raw)
    .filter((e) => e.path === path)
    .map((e) => e.message);
}

describe('command jobs: rules', () => {
  it('a job has exactly one of request and command, reported at the job', () => {
    const neither = { version: 1, app: 'app', jobs: [{ name: 'a', schedule: '@hourly' }] };
    expect(errorsAt(neither, 'jobs/0')).toEqual([
      'expected exactly one of "request" (an HTTP job) or "command", found neither',
    ]);
    const both = withCommand({}, { request: { url: 'https://x.example.com/' } });
    expect(errorsAt(both, 'jobs/0')).toEqual([
      'expected exactly one of "request" (an HTTP job) or "command", found both; keep one',
    ]);
  });

  it.each<[string, Record<string, Json>, string, string]>([
    ['argv empty', { argv: [] }, `${C}/argv`, 'expected an array of 1 to 1024 entries'],
    ['argv not strings', { argv: ['/bin/x', 3] }, `${C}/argv/1`, 'expected a string'],
    ['argv with NUL', { argv: ['/bin/x', 'a\u0000b'] }, `${C}/argv/1`, 'without NUL'],
    ['empty program', { argv: [''] }, `${C}/argv/0`, 'found an empty string'],
    ['relative cwd', { cwd: 'srv' }, `${C}/cwd`, 'expected an absolute directory'],
    ['bad env name', { env: { '1X': 'v' } }, `${C}/env/1X`, 'environment variable name'],
    ['env value not a string', { env: { X: 1 } }, `${C}/env/X`, 'found 1'],
    ['reserved env', { env: { CRONIX_RUN_ID: 'x' } }, `${C}/env/CRONIX_RUN_ID`, 'is reserved'],
    ['reserved env in any case', { env: { cronix_x: 'x' } }, `${C}/env/cronix_x`, 'is reserved'],
    [
      'reserved secret env',
      { env_from_secrets: { CRONIX_FENCING_TOKEN: 'env:X' } },
      `${C}/env_from_secrets/CRONIX_FENCING_TOKEN`,
      'is reserved',
    ],
    [
      'bad secret ref',
      { env_from_secrets: { DB: 'not a ref' } },
      `${C}/env_from_secrets/DB`,
      'found "not a ref"',
    ],
    [
      'variable in env and env_from_secrets',
      { env: { DB: 'x' }, env_from_secrets: { DB: 'env:DB' } },
      `${C}/env_from_secrets/DB`,
      'is also set in env',
    ],
    [
      'graceful stop below 0',
      { graceful_stop_seconds: -1 },
      `${C}/graceful_stop_seconds`,
      'from 0 to 3600, found -1',
    ],
    [
      'graceful stop above 3600',
      { graceful_stop_seconds: 3601 },
      `${C}/graceful_stop_seconds`,
      'found 3601',
    ],
    [
      'output cap not an integer',
      { max_output_bytes: 1.5 },
      `${C}/max_output_bytes`,
      'from 0 to 1073741824',
    ],
    ['no success code', { success_exit_codes: [] }, `${C}/success_exit_codes`, '1 to 256'],
    ['exit code 256', { success_exit_codes: [256] }, `${C}/success_exit_codes/0`, '0 to 255'],
    [
      'duplicate exit code',
      { success_exit_codes: [0, 0] },
      `${C}/success_exit_codes/1`,
      'duplicate exit code 0',
    ],
    [
      'code both success and reject',
      { success_exit_codes: [0, 3], reject_exit_codes: [1, 3] },
      `${C}/reject_exit_codes/1`,
      'exit code 3 is already a success exit code (success_exit_codes/1)',
    ],
    [
      'code both default success and reject',
      { reject_exit_codes: [0] },
      `${C}/reject_exit_codes/0`,
      'exit code 0 is already a success exit code (success_exit_codes (the default [0]))',
    ],
    ['unknown field', { shell: true }, `${C}/shell`, 'unknown field "shell"'],
  ])('%s → an error at its path', (_name, command, path, fragment) => {
    const messages = errorsAt(withCommand(command), path);
    expect(messages.join('\n')).toContain(fragment);
  });

  it('reports every problem of a command at once', () => {
    const errors = expectInvalid(
      withCommand({ argv: [''], cwd: 'x', env: { CRONIX_A: '1' }, reject_exit_codes: [0] }),
    );
    expect(errors.map((e) => e.path)).toEqual([
      `${C}/argv/0`,
      `${C}/cwd`,
      `${C}/env/CRONIX_A`,
      `${C}/reject_exit_codes/0`,
    ]);
  });

  it('cuts a long value echoed in a message to 200 characters', () => {
    const [message] = errorsAt(withCommand({ cwd: 'x'.repeat(5000) }), `${C}/cwd`);
    expect(message!.length).toBeLessThan(400);
    expect(message).toContain('more characters');
  });

  it('accepts the full example of SPEC §11, and the quick checker agrees', () => {
    const raw = withCommand({
      argv: ['/usr/local/bin/backup', '--full'],
      env: { K: 'v' },
      env_from_secrets: { DB_PASSWORD: 'file:/run/secrets/db' },
      cwd: '/srv',
      graceful_stop_seconds: 10,
      max_output_bytes: 1048576,
      success_exit_codes: [0],
      reject_exit_codes: [],
    });
    const m = expectValid(raw);
    expect(acceptManifest(raw)).toEqual(m);
    expect(acceptManifest(withCommand({ argv: [''] }))).toBeNull();
    expect(acceptManifest(withCommand({ env: { CRONIX_X: '1' } }))).toBeNull();
  });
});

describe('command jobs: normalization and canonical form', () => {
  const TAIL =
    '"policy":{"concurrency":"Forbid","concurrency_scope":"host","timeout_seconds":60,' +
    '"retries":{"max_attempts":3,"min_seconds":1,"max_seconds":60}},"auth":{"secret_refs":[]}';

  it('writes no request, and only the command fields that were set, after auth', () => {
    const m = expectValid(withCommand({ argv: ['/bin/backup', '--full'] }));
    expect(m.jobs[0]?.request).toBeUndefined();
    expect(canonicalize(m)).toBe(
      `{"version":1,"app":"app","jobs":[{"name":"a","schedules":["@hourly"],"timezone":"UTC",${TAIL},` +
        '"command":{"argv":["/bin/backup","--full"]}}]}',
    );
  });

  it('orders every command field, sorts env keys, and puts enabled before command', () => {
    const m = expectValid(
      withCommand(
        {
          reject_exit_codes: [3, 1],
          success_exit_codes: [0, 2],
          max_output_bytes: 100,
          graceful_stop_seconds: 0,
          cwd: '/srv',
          env_from_secrets: { Z: 'env:Z', A: 'file:/a' },
          env: { b: '2', a: '1' },
          argv: ['x'],
        },
        { enabled: false },
      ),
    );
    expect(canonicalize(m)).toContain(
      `${TAIL},"enabled":false,"command":{"argv":["x"],"env":{"a":"1","b":"2"},` +
        '"env_from_secrets":{"A":"file:/a","Z":"env:Z"},"cwd":"/srv","graceful_stop_seconds":0,' +
        '"max_output_bytes":100,"success_exit_codes":[0,2],"reject_exit_codes":[3,1]}}]}',
    );
  });

  it('drops empty env maps, so they hash like absent ones; defaults written out still change the hash', () => {
    const bare = expectValid(withCommand({}));
    const empty = expectValid(withCommand({ env: {}, env_from_secrets: {} }));
    expect(canonicalize(empty)).toBe(canonicalize(bare));
    const explicit = expectValid(withCommand({ graceful_stop_seconds: 10 }));
    expect(changeHash(explicit, 'a', 0)).not.toBe(changeHash(bare, 'a', 0));
    const other = expectValid(withCommand({ argv: ['/bin/false'] }));
    expect(changeHash(other, 'a', 0)).not.toBe(changeHash(bare, 'a', 0));
  });

  it('parse ∘ canonicalize is a fixed point for command jobs', () => {
    const m = expectValid(
      withCommand({ env: { X: 'é\u2028' }, env_from_secrets: { P: 'raw:x' }, cwd: '/' }),
    );
    const again = expectValid(JSON.parse(canonicalize(m)) as Json);
    expect(canonicalize(again)).toBe(canonicalize(m));
  });
});

describe('command jobs: effective values and warnings', () => {
  it('fills the defaults of SPEC §11', () => {
    expect(effectiveCommand({ argv: ['x'] })).toEqual({
      argv: ['x'],
      env: {},
      env_from_secrets: {},
      cwd: null,
      graceful_stop_seconds: 10,
      max_output_bytes: 1048576,
      success_exit_codes: [0],
      reject_exit_codes: [],
    });
    const m = expectValid(withCommand({ graceful_stop_seconds: 3 }));
    expect(attemptStopSeconds(m.jobs[0]!)).toBe(3);
  });

  it('warns about secret_refs on a command job (never read), not about their absence', () => {
    expect(manifestWarnings(expectValid(withCommand({})))).toEqual([]);
    const signed = expectValid(withCommand({}, { auth: { secret_refs: ['env:X'] } }));
    expect(
      manifestWarnings(signed)
        .map((w) => w.message)
        .join(),
    ).toContain('not used by a command job');
  });
});
