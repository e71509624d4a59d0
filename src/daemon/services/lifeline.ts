/**
 * Ties an instance's life to its daemon's (SPEC §17): a daemon killed with SIGKILL cannot stop
 * its children, so each instance is started through a few lines of `/bin/sh` that leave a
 * watcher behind in the instance's process group and `exec` the service:
 *
 *     ( exec >/dev/null 2>&1; read -r _ <&3; trap '' TERM; kill -TERM 0
 *       wait up to G seconds while the service ($$) lives; kill -KILL 0 ) &
 *     exec 3<&- "$@"
 *
 * The watcher blocks on file descriptor 3, the lifeline (`CommandRequest.lifeline`): one end of a
 * socket pair whose other end only the daemon holds. When the daemon dies, however it died, the
 * OS closes its end, `read` returns, and the watcher stops its group: SIGTERM, then SIGKILL once the
 * service is gone or `G` seconds have passed (whole seconds). While the daemon lives, the watcher is just another member of the group, stopped
 * with it (SIGTERM ends it at once: it traps TERM only after the lifeline broke). The service keeps
 * the pid and start time the daemon recorded (`exec` keeps both) and does not hold fd 3.
 *
 * The cost is one `sh` process per instance (about 1 MB); `/bin/sh` is POSIX on every Linux.
 * Without `/bin/sh` nothing can be tied: the supervisor then runs the service directly (the
 * leftovers found at the next start, by pid and start time, are the only safety net).
 */
import { accessSync, constants } from 'node:fs';

/** The shell the watcher runs in. */
export const SHELL = '/bin/sh';

const SCRIPT =
  'g=$1; shift; ( exec >/dev/null 2>&1; read -r _ <&3; trap "" TERM; kill -TERM 0; i=0; while [ "$i" -lt "$g" ] && kill -0 $$ 2>/dev/null; do sleep 1; i=$((i+1)); done; kill -KILL 0 ) & exec 3<&- "$@"';

/** `$0` of the wrapper: what `ps` shows for the watcher. */
export const WATCHER_NAME = 'cronix-lifeline';

let shellUsable: boolean | undefined;

/** Whether `/bin/sh` can be run here. */
export function lifelineAvailable(): boolean {
  if (shellUsable === undefined) {
    try {
      accessSync(SHELL, constants.X_OK);
      shellUsable = true;
    } catch {
      shellUsable = false;
    }
  }
  return shellUsable;
}

/**
 * The argv that runs `argv` tied to the daemon's life, its group stopped `graceSeconds` after
 * SIGTERM when the daemon is gone.
 */
export function tiedArgv(argv: readonly string[], graceSeconds: number): string[] {
  return [
    SHELL,
    '-c',
    SCRIPT,
    WATCHER_NAME,
    String(Math.max(0, Math.floor(graceSeconds))),
    ...argv,
  ];
}
