/**
 * `cronix reload [--data-dir DIR]`: tells the `cronix serve` of a data dir to reload its
 * manifests (SIGHUP), finding its pid from `<data-dir>/serve.holder` while it holds
 * `serve.lock`. The daemon logs `reloaded` or `reload-failed` (the old manifests keep running).
 */
import { resolve } from 'node:path';
import { serveHolder } from '../../daemon/serve-holder.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Exit 0 signalled, 1 no daemon on the data dir or not allowed to signal it. */
export async function reloadCommand(o: { dataDir: string; output: OutputFormat }): Promise<number> {
  const dataDir = resolve(o.dataDir);
  const found = await serveHolder(dataDir);
  const fail = (message: string): number => {
    process.stderr.write(`error: ${message}\n`);
    return EXIT.error;
  };
  if (!found.ok) return fail(found.reason);
  try {
    process.kill(found.pid, 'SIGHUP');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return fail(
      code === 'EPERM'
        ? `not allowed to signal cronix serve (pid ${found.pid}) on data dir ${dataDir}: run cronix reload as the user the daemon runs as`
        : `cannot signal cronix serve (pid ${found.pid}): ${code ?? String(err)}`,
    );
  }
  if (o.output === 'json') printJson({ data_dir: dataDir, pid: found.pid, signal: 'SIGHUP' });
  else
    printLines([
      `sent SIGHUP to cronix serve (pid ${found.pid}, data dir ${dataDir}): it reloads its manifests and logs "reloaded", or "reload-failed" with the reason (the previous manifests keep running)`,
    ]);
  return EXIT.ok;
}
