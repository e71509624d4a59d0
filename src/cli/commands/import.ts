/**
 * `cronix import crontab [FILE|-] [--system] [--app NAME] [-o json]` (SPEC §14): the manifest on
 * stdout, one verdict per line on stderr (text, or one JSON object per line with `-o json`).
 * With `--watch --server URL --report-secret-ref REF` (SPEC §15) the manifest is a watched one
 * and every job line's verdict is followed by the ping suffix to append to it (`import/watch.ts`).
 * Exit 0 when a manifest was printed, 1 when nothing could be imported or the file cannot be
 * read, 2 for a bad flag. See docs/import.md.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LIMITS } from '../../contract/manifest/defaults.js';
import { parseManifest } from '../../contract/manifest/index.js';
import { checkTimeZone } from '../../contract/schedule/index.js';
import { importCrontab, slug, type Verdict } from '../../import/crontab-import.js';
import { detectHostZone } from '../../reconcile/backends/crontab.js';
import { userTarget } from '../../reconcile/backends/crontab-target.js';
import { EXIT, UsageError, outputFormat } from '../output.js';
import { reportUrlProblem } from '../../contract/report-target.js';
import { watchedJobs, watchSuffix } from '../../import/watch.js';
import { refForDisplay, resolveSecretRefs } from '../../secrets/resolve.js';

/** Flags of `cronix import crontab`. */
export interface ImportFlags {
  system?: boolean;
  app?: string;
  output?: string;
  cronTimezone?: string;
  secretRef?: string[];
  /** `--watch` (SPEC §15): a watched manifest and a ping suffix per line. */
  watch?: boolean;
  server?: string;
  reportSecretRef?: string;
}

const APP = /^[a-z][a-z0-9-]{0,62}$/;
const REF = /^[a-zA-Z][a-zA-Z0-9_:./-]{0,127}$/;

function readSource(file: string | undefined): { text: string; name: string } {
  if (file === '-') return { text: readFileSync(0, 'utf8'), name: 'stdin' };
  if (file === undefined) return { text: userTarget().read(), name: 'user crontab' };
  try {
    return { text: readFileSync(file, 'utf8'), name: file };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ImportReadError(
      `cannot read crontab ${file}: ${code}; check the path and permissions`,
    );
  }
}

class ImportReadError extends Error {}

/**
 * `--watch` needs `--server` and `--report-secret-ref` (the ping tokens are derived from the
 * report secret); the resolved secret, or undefined without `--watch`.
 * @throws {UsageError} naming the flag; {@link ImportReadError} when the secret does not resolve.
 */
function watchSecretOf(flags: ImportFlags): string | undefined {
  if (!flags.watch) {
    if (flags.server !== undefined || flags.reportSecretRef !== undefined)
      throw new UsageError('--server and --report-secret-ref go with --watch');
    return undefined;
  }
  if (flags.server === undefined || flags.reportSecretRef === undefined) {
    throw new UsageError(
      "--watch needs --server URL (the cronix serve --watch the lines ping) and --report-secret-ref REF (its report secret, from which each job's ping token is derived)",
    );
  }
  const problem = reportUrlProblem(flags.server);
  if (problem !== null) throw new UsageError(`--server: ${problem}`);
  if (!REF.test(flags.reportSecretRef))
    throw new UsageError(
      `--report-secret-ref ${JSON.stringify(flags.reportSecretRef.slice(0, 120))} is not a secret ref (env:NAME, file:/path or raw:value)`,
    );
  const resolved = resolveSecretRefs([flags.reportSecretRef]);
  const secret = resolved.secrets[0];
  if (secret === undefined) {
    throw new ImportReadError(
      `--report-secret-ref ${refForDisplay(flags.reportSecretRef)}: ${resolved.unresolved[0]?.reason ?? 'not resolved'}`,
    );
  }
  return secret;
}

function defaultApp(file: string | undefined): string {
  if (file === undefined || file === '-') return 'crontab';
  return slug(basename(file), 'crontab');
}

/** Runs the command and returns its exit code. */
export async function importCrontabCommand(
  file: string | undefined,
  flags: ImportFlags,
): Promise<number> {
  const format = outputFormat(flags.output);
  const app = flags.app ?? defaultApp(file);
  if (!APP.test(app)) {
    throw new UsageError(
      `--app ${JSON.stringify(app)} is not an app name (expected ^[a-z][a-z0-9-]{0,62}$, such as billing-service)`,
    );
  }
  for (const ref of flags.secretRef ?? []) {
    if (!REF.test(ref))
      throw new UsageError(
        `--secret-ref ${JSON.stringify(ref)} is not a secret ref (env:NAME, file:/path or raw:value)`,
      );
  }
  let watchSecret: string | undefined;
  try {
    watchSecret = watchSecretOf(flags);
  } catch (err) {
    if (!(err instanceof ImportReadError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return EXIT.error;
  }
  const hostZone = flags.cronTimezone ?? detectHostZone(process.env);
  const zoneError = checkTimeZone(hostZone);
  if (zoneError !== null) {
    throw new UsageError(
      `${flags.cronTimezone !== undefined ? '--cron-timezone' : "the cron daemon's zone"} ${JSON.stringify(hostZone)}: ${zoneError}; pass --cron-timezone with an IANA zone`,
    );
  }
  const system =
    flags.system ??
    (file !== undefined && (file === '/etc/crontab' || file.startsWith('/etc/cron.d/')));
  let source;
  try {
    source = readSource(file);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return EXIT.error;
  }
  const result = importCrontab(source.text, {
    app,
    system,
    hostZone,
    secretRefs: flags.secretRef ?? [],
  });
  const suffix = (v: Verdict): string | undefined =>
    watchSecret !== undefined && v.verdict === 'job' && v.job !== undefined
      ? watchSuffix(flags.server as string, app, v.job, watchSecret)
      : undefined;
  const say = (v: Verdict): void => {
    const append = suffix(v);
    if (format === 'json')
      process.stderr.write(`${JSON.stringify(append ? { ...v, append } : v)}\n`);
    else {
      process.stderr.write(`line ${v.line}: ${v.verdict}: ${v.message}\n`);
      if (append) process.stderr.write(`line ${v.line}: append: ${append}\n`);
    }
  };
  result.verdicts.forEach(say);
  if (result.manifest.jobs.length === 0) {
    process.stderr.write(
      `error: no line of ${source.name} could be imported (a manifest needs at least one job)\n`,
    );
    return EXIT.error;
  }
  if (result.manifest.jobs.length > LIMITS.jobs.max) {
    process.stderr.write(
      `error: ${source.name} has ${result.manifest.jobs.length} importable lines, but a manifest holds at most ${LIMITS.jobs.max} jobs; split the crontab and import each part with its own --app\n`,
    );
    return EXIT.error;
  }
  if (watchSecret !== undefined) result.manifest.jobs = watchedJobs(result.manifest.jobs);
  const check = parseManifest(result.manifest);
  if (!check.ok) {
    // a defect of the importer, not of the input: say so instead of printing a bad manifest
    for (const e of check.errors) process.stderr.write(`error: ${e.path}: ${e.message}\n`);
    process.stderr.write(
      'error: internal error: the imported manifest is invalid (please report)\n',
    );
    return EXIT.error;
  }
  process.stdout.write(`${JSON.stringify(result.manifest, null, 2)}\n`);
  const lines = result.importedLines.join(', ');
  if (watchSecret !== undefined) {
    const note = `cron keeps running the imported lines (${lines} of ${source.name}): append to each the suffix printed for it, and run "cronix serve --watch <this manifest> --report-secret-ref …" at ${flags.server as string} with the same secret; it records every run they ping and the ones that never come (missed)`;
    if (format === 'json')
      process.stderr.write(
        `${JSON.stringify({ level: 'info', message: note, lines: result.importedLines })}\n`,
      );
    else process.stderr.write(`info: ${note}\n`);
    return EXIT.ok;
  }
  const warning = `cron keeps running the imported lines (${lines} of ${source.name}) until you remove them: after "cronix apply" (or while "cronix serve" runs these jobs), delete or comment out those lines, or every job fires twice`;
  if (format === 'json')
    process.stderr.write(
      `${JSON.stringify({ level: 'warning', message: warning, lines: result.importedLines })}\n`,
    );
  else process.stderr.write(`warning: ${warning}\n`);
  return EXIT.ok;
}
