/**
 * Shared plumbing of the reconciler commands: flags → backend options, manifest loading with
 * exit codes, error → exit code mapping, and the INFO lines of actual changes.
 */
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { Manifest } from '../../contract/manifest/index.js';
import { SECRET_REF_PATTERN } from '../../contract/manifest/defaults.js';
import { echo } from '../../contract/echo.js';
import { reportUrlProblem } from '../../contract/report-target.js';
import {
  BackendConfigError,
  BackendUnreachableError,
  BackendWriteError,
  type Backend,
  type ReportTarget,
} from '../../reconcile/backend.js';
import { ApplyLockedError, ApplyLockError, type ApplyEvent } from '../../reconcile/apply.js';
import {
  createBackend,
  isBackendName,
  type BackendOptions,
} from '../../reconcile/backends/index.js';
import { loadManifestSource } from '../../source/url.js';
import { UsageError, type OutputFormat } from '../output.js';
import type { ReconcileFlags } from './reconcile-flags.js';

/** Exit codes of the reconciler commands (SPEC §6). */
export const RECONCILE_EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  unreachable: 3,
  auth: 4,
  drift: 5,
} as const;

/** The default spec dir: `$CRONIX_JOB_SPEC_DIR`, else `/etc/cronix/jobs`. */
export function specDirOf(flags: Pick<ReconcileFlags, 'specDir'>, env = process.env): string {
  return resolve(flags.specDir ?? env['CRONIX_JOB_SPEC_DIR'] ?? '/etc/cronix/jobs');
}

/** The shim's state dir: `--state-dir`, else `$CRONIX_STATE_DIR`, else `/var/lib/cronix`. */
export function stateDirOf(flags: Pick<ReconcileFlags, 'stateDir'>, env = process.env): string {
  return resolve(flags.stateDir ?? env['CRONIX_STATE_DIR'] ?? '/var/lib/cronix');
}

/**
 * The argv prefix that runs `bin` on the host: a JavaScript entry (`.mjs`, `.js`, `.cjs`,
 * also through a symlink) is run by this Node binary's absolute path, because the PATH of cron
 * and systemd may not contain `node`.
 */
export function triggerCommandOf(bin: string, execPath = process.execPath): string[] {
  let real = bin;
  try {
    real = realpathSync(bin);
  } catch {
    // not installed here (yet): judge by the name given
  }
  return /\.(mjs|cjs|js)$/.test(real) ? [execPath, bin] : [bin];
}

const realOr = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * Whether `path` (or where it leads) lies in npx's cache, `~/.npm/_npx/<hash>/…`: a copy that
 * `npm cache clean` or the next npx run may delete, so a crontab entry pointing there breaks.
 */
export function inNpxCache(path: string): boolean {
  const npx = /(^|\/)_npx\//;
  return npx.test(path) || npx.test(realOr(path));
}

/** The first executable `cronix` on `PATH` that is not npx's temporary copy, or null. */
export function installedCronix(path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !dir.startsWith('/')) continue;
    const candidate = join(dir, 'cronix');
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    if (!inNpxCache(candidate)) return candidate;
  }
  return null;
}

/**
 * The cronix binary the host scheduler will run: `--trigger-bin`, else the running binary,
 * unless that is npx's temporary copy — then the installed `cronix` on `PATH`. For commands that
 * write entries (`forWrite`), an npx copy with no installed cronix is a usage error naming the
 * fix; commands that only read entries (list, show, prune) fall back to the running binary.
 * @throws {UsageError}
 */
export function triggerBinOf(
  given: string | undefined,
  forWrite: boolean,
  env = process.env,
  running = process.argv[1] ?? 'cronix',
): string {
  if (given !== undefined) {
    const bin = resolve(given);
    if (!existsSync(bin)) {
      throw new UsageError(
        `--trigger-bin ${bin} does not exist; pass the absolute path of the cronix binary`,
      );
    }
    if (forWrite && inNpxCache(bin)) {
      throw new UsageError(
        `--trigger-bin ${bin} is in npx's cache, which "npm cache clean" deletes; pass an installed cronix (npm install -g cronix, then --trigger-bin "$(npm prefix -g)/bin/cronix")`,
      );
    }
    return bin;
  }
  const self = resolve(running);
  if (!inNpxCache(self)) return self;
  const installed = installedCronix(env['PATH']);
  if (installed !== null) return installed;
  if (!forWrite) return self;
  throw new UsageError(
    `this cronix runs from npx's cache (${self}); entries pointing there break when the npm cache is cleaned. ` +
      'Install cronix (npm install -g cronix, or npm install cronix in the project) and pass its path: ' +
      '--trigger-bin "$(npm prefix -g)/bin/cronix" or --trigger-bin "$PWD/node_modules/.bin/cronix"',
  );
}

/**
 * `--report-to` and `--report-secret-ref` (SPEC §15): both or neither, a usable base URL and
 * well-formed refs; undefined without them.
 * @throws {UsageError} naming the flag and the value.
 */
export function reportTargetOf(
  flags: Pick<ReconcileFlags, 'reportTo' | 'reportSecretRef'>,
): ReportTarget | undefined {
  const refs = flags.reportSecretRef ?? [];
  if (flags.reportTo === undefined) {
    if (refs.length > 0) {
      throw new UsageError(
        '--report-secret-ref needs --report-to URL: the cronix serve --watch the shim reports to',
      );
    }
    return undefined;
  }
  const problem = reportUrlProblem(flags.reportTo);
  if (problem !== null) throw new UsageError(`--report-to: ${problem}`);
  if (refs.length === 0) {
    throw new UsageError(
      '--report-to needs --report-secret-ref REF (env:NAME, file:/path or raw:value): reports are signed, and the server verifies them with the same secret (cronix serve --report-secret-ref)',
    );
  }
  const pattern = new RegExp(SECRET_REF_PATTERN);
  for (const ref of refs) {
    if (!pattern.test(ref)) {
      throw new UsageError(
        `--report-secret-ref: expected a secret ref such as env:CRONIX_REPORT_SECRET or file:/etc/cronix/report-secret, found ${echo(ref, 80)}`,
      );
    }
  }
  if (refs.length > 8)
    throw new UsageError(`--report-secret-ref: at most 8 refs, found ${refs.length}`);
  return { url: flags.reportTo, secretRefs: [...refs] };
}

/**
 * Flags → backend options. `forWrite`: the command renders the trigger command line (plan,
 * apply, drift, adopt), so it must not be npx's temporary copy.
 * @throws {UsageError} for a bad `--backend` or `--trigger-bin`.
 */
export function backendOptionsOf(
  flags: ReconcileFlags,
  env = process.env,
  forWrite = true,
): BackendOptions {
  const specDir = specDirOf(flags, env);
  const triggerBin = triggerBinOf(flags.triggerBin, forWrite, env);
  const shimArgs = ['--spec-dir', specDir];
  if (flags.lockDir !== undefined) shimArgs.push('--lock-dir', resolve(flags.lockDir));
  if (flags.stateDir !== undefined) shimArgs.push('--state-dir', resolve(flags.stateDir));
  if (flags.lockBackend !== undefined) shimArgs.push('--lock-backend', flags.lockBackend);
  const report = reportTargetOf(flags);
  if (report !== undefined) shimArgs.push('--report-to', report.url);
  const opt = <K extends keyof BackendOptions>(key: K, value: BackendOptions[K] | undefined) =>
    value === undefined ? {} : { [key]: value };
  return {
    specDir,
    triggerBin,
    triggerCommand: triggerCommandOf(triggerBin),
    shimArgs,
    env,
    cronUser: flags.cronUser,
    ...opt('report', report),
    ...opt('crontabPath', flags.crontabPath),
    ...opt('cronTimezone', flags.cronTimezone),
    ...opt('systemdUnitDir', flags.systemdUnitDir),
    ...opt('k8sNamespace', flags.k8sNamespace),
    ...opt('k8sImage', flags.k8sImage),
    ...opt('kubeconfig', flags.kubeconfig),
    ...opt('k8sSecret', flags.k8sSecret),
    ...opt('k8sRender', flags.k8sRender),
    ...opt('awsRegion', flags.awsRegion),
    ...opt('awsScheduleGroup', flags.awsScheduleGroup),
    ...opt('awsTargetArn', flags.awsTargetArn),
    ...opt('awsRoleArn', flags.awsRoleArn),
  };
}

/**
 * Creates the backend the flags name. `forWrite` as for {@link backendOptionsOf} (false for
 * list, show and prune).
 */
export async function backendOf(
  flags: ReconcileFlags,
  forWrite = true,
): Promise<{ backend: Backend; options: BackendOptions }> {
  if (!isBackendName(flags.backend)) {
    throw new UsageError(
      `--backend must be crontab, systemd, kubernetes or aws-scheduler, found ${JSON.stringify(flags.backend)}`,
    );
  }
  const options = backendOptionsOf(flags, process.env, forWrite);
  return { backend: await createBackend(flags.backend, options), options };
}

/** A failure with its exit code, already worded for the operator. */
export class CommandFailure extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** Loads the manifest or throws a {@link CommandFailure} with the SPEC §6 exit code. */
export async function loadManifestOrFail(source: string, flags: ReconcileFlags): Promise<Manifest> {
  const r = await loadManifestSource(source, { secretRefs: flags.secretRef });
  if (r.ok) return r.manifest;
  if (r.kind === 'invalid') {
    const n = r.errors.length;
    throw new CommandFailure(
      RECONCILE_EXIT.error,
      `${source} is not a valid manifest (${n} error${n === 1 ? '' : 's'})`,
      r.errors,
    );
  }
  const code =
    r.kind === 'auth'
      ? RECONCILE_EXIT.auth
      : r.kind === 'usage'
        ? RECONCILE_EXIT.usage
        : RECONCILE_EXIT.error;
  throw new CommandFailure(code, r.message);
}

const ERRNO_EXIT = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'ENOTDIR',
  'ENOENT',
  'EISDIR',
  'EEXIST',
]);

/** Maps any error of a reconciler command to an exit code and one clean message. */
export function failureOf(err: unknown): CommandFailure {
  if (err instanceof CommandFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UsageError || err instanceof BackendConfigError)
    return new CommandFailure(RECONCILE_EXIT.usage, message);
  if (err instanceof BackendUnreachableError)
    return new CommandFailure(RECONCILE_EXIT.unreachable, message);
  if (
    err instanceof BackendWriteError ||
    err instanceof ApplyLockedError ||
    err instanceof ApplyLockError
  ) {
    return new CommandFailure(RECONCILE_EXIT.error, message);
  }
  const code = (err as NodeJS.ErrnoException).code;
  const path = (err as NodeJS.ErrnoException).path;
  if (code !== undefined && ERRNO_EXIT.has(code)) {
    return new CommandFailure(
      RECONCILE_EXIT.error,
      `cannot write ${path ?? 'a file'}: ${code} (check --spec-dir and permissions)`,
    );
  }
  return new CommandFailure(RECONCILE_EXIT.error, `internal error: ${message}`);
}

/** Prints a failure (stderr; plus a JSON document on stdout with `-o json`) and returns its code. */
export function reportFailure(err: unknown, format: OutputFormat): number {
  const f = failureOf(err);
  const lines = [
    `error: ${f.message}`,
    ...f.details.map((d) => `  ${d.path === '' ? '(root)' : d.path}: ${d.message}`),
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
  if (format === 'json') {
    process.stdout.write(
      `${JSON.stringify({ error: { exit_code: f.exitCode, message: f.message, errors: f.details } })}\n`,
    );
  }
  return f.exitCode;
}

/** Prints one INFO line per actual change on stderr (text, or JSON lines with `-o json`). */
export function eventPrinter(format: OutputFormat): (e: ApplyEvent) => void {
  return (e) => {
    let msg: string;
    let fields: Record<string, unknown>;
    if (e.event === 'spec-written' || e.event === 'spec-removed') {
      msg = `${e.event === 'spec-written' ? 'wrote' : 'removed'} spec file ${e.path}`;
      fields = { path: e.path };
    } else if (e.event === 'state-removed') {
      msg = `removed state dir ${e.path}`;
      fields = { path: e.path };
    } else {
      const verb = {
        'entry-deleted': 'deleted',
        'entry-updated': 'updated',
        'entry-created': 'created',
      }[e.event];
      const schedule = 'schedule' in e.entry ? ` (${e.entry.schedule})` : '';
      const why = e.event === 'entry-updated' && e.reason !== 'hash' ? ` [${e.reason}]` : '';
      msg = `${verb} ${e.entry.id}${schedule}${why}`;
      fields = {
        id: e.entry.id,
        app: e.entry.app,
        job: e.entry.job,
        schedule_index: e.entry.scheduleIndex,
        hash: e.entry.hash,
      };
    }
    if (format === 'json') {
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'info', event: e.event, msg, ...fields })}\n`,
      );
    } else {
      process.stderr.write(`info: ${msg}\n`);
    }
  };
}
