/**
 * Rules of `jobs[].command` (SPEC §11) that JSON Schema cannot express: argv[0] names a program,
 * `cwd` is absolute, `CRONIX_*` variables are reserved, a variable is set by `env` or by
 * `env_from_secrets` but not both, and exit codes are unique and either success or reject.
 * Walks the raw value defensively, like the other semantic checks.
 */
import { COMMAND_DEFAULTS, RESERVED_ENV_PREFIX } from './defaults.js';
import { childPath, isRecord, own, quote } from './describe.js';

/** Adds one error. */
type Add = (path: string, message: string) => void;

function checkArgv(add: Add, argv: unknown, path: string): void {
  if (!Array.isArray(argv)) return;
  const first: unknown = argv[0];
  if (first === '') {
    add(
      childPath(childPath(path, 'argv'), 0),
      'expected the program to run (a path such as "/usr/local/bin/backup", or a name looked up in PATH), found an empty string',
    );
  }
}

function checkCwd(add: Add, cwd: unknown, path: string): void {
  if (typeof cwd !== 'string' || cwd.startsWith('/')) return;
  add(
    childPath(path, 'cwd'),
    `expected an absolute directory (starting with "/"), found ${quote(cwd)}; a relative one would depend on where cronix was started`,
  );
}

function checkEnvNames(add: Add, command: unknown, path: string): void {
  const env = own(command, 'env');
  const secrets = own(command, 'env_from_secrets');
  for (const [field, map] of [
    ['env', env],
    ['env_from_secrets', secrets],
  ] as const) {
    if (!isRecord(map)) continue;
    for (const name of Object.keys(map)) {
      if (name.toUpperCase().startsWith(RESERVED_ENV_PREFIX)) {
        add(
          childPath(childPath(path, field), name),
          `variable ${quote(name)} is reserved: cronix sets the ${RESERVED_ENV_PREFIX}* variables of every run (CRONIX_RUN_ID, CRONIX_RUN_KEY, ...); choose another name`,
        );
      }
      if (field === 'env_from_secrets' && isRecord(env) && Object.hasOwn(env, name)) {
        add(
          childPath(childPath(path, field), name),
          `variable ${quote(name)} is also set in env; set it in one of env and env_from_secrets`,
        );
      }
    }
  }
}

/** Exit codes are unique, and in success or reject, not both (against the effective `[0]`). */
function checkExitCodes(add: Add, command: unknown, path: string): void {
  const success = own(command, 'success_exit_codes');
  const reject = own(command, 'reject_exit_codes');
  const seen = new Map<number, string>();
  if (success === undefined)
    for (const code of COMMAND_DEFAULTS.success_exit_codes)
      seen.set(code, 'success_exit_codes (the default [0])');
  for (const [field, codes] of [
    ['success_exit_codes', success],
    ['reject_exit_codes', reject],
  ] as const) {
    if (!Array.isArray(codes)) continue;
    codes.forEach((code: unknown, k) => {
      if (typeof code !== 'number' || !Number.isInteger(code)) return;
      const where = childPath(childPath(path, field), k);
      const first = seen.get(code);
      if (first === undefined) seen.set(code, `${field}/${k}`);
      else if (first.startsWith(field))
        add(where, `duplicate exit code ${code}: ${first} is the same`);
      else
        add(
          where,
          `exit code ${code} is already a success exit code (${first}); an exit code is either success or reject`,
        );
    });
  }
}

/** Every semantic problem of one `command` object (at `path`, e.g. `jobs/0/command`). */
export function checkCommand(add: Add, command: unknown, path: string): void {
  if (!isRecord(command)) return;
  checkArgv(add, own(command, 'argv'), path);
  checkCwd(add, own(command, 'cwd'), path);
  checkEnvNames(add, command, path);
  checkExitCodes(add, command, path);
}
