/**
 * `cronix logs <run-id> [-f] [--raw]`: a command run's captured output (SPEC §11), from the
 * daemon's `GET /api/v1/runs/{id}/log`; with `-f` it follows the run until it ends. Control
 * characters (ESC, CR without LF, C1, …) are written as `\xHH` so a job's output cannot drive
 * the terminal (SPEC §9 item 9); `--raw` writes the bytes exactly as captured. Exit 0, 1 for
 * an API error or an unreachable daemon.
 */
import { escapeControls, TerminalEscaper } from '../../io/terminal.js';
import { EXIT } from '../output.js';
import { endpoint, token, type ClientOptions } from './client.js';

/** How long to wait for the daemon to answer (not for the output to end). */
const CONNECT_TIMEOUT_MS = 30_000;

/** Runs `cronix logs`; resolves with the exit code. */
export async function logsCommand(
  id: string,
  o: Pick<ClientOptions, 'url' | 'tokenFile'> & { follow: boolean; raw?: boolean },
): Promise<number> {
  const base = endpoint(o);
  const t = token(o);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), CONNECT_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(
      `${base}/api/v1/runs/${encodeURIComponent(id)}/log${o.follow ? '?follow=1' : ''}`,
      {
        headers: { ...(t ? { authorization: `Bearer ${t}` } : {}), 'x-cronix-client': 'cli' },
        signal: controller.signal,
      },
    );
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error) : null;
    process.stderr.write(
      `error: cannot reach the daemon at ${base}: ${cause?.message ?? (err as Error).message} (is "cronix serve" running? set --url or CRONIX_URL)\n`,
    );
    return EXIT.error;
  } finally {
    clearTimeout(timer);
  }
  if (!res.ok) {
    const json = (await res.json().catch(() => ({}))) as {
      error?: { code?: string; message?: string };
    };
    process.stderr.write(
      `error: ${res.status} ${json.error?.code ?? ''}: ${escapeControls(json.error?.message ?? res.statusText)}\n`,
    );
    return EXIT.error;
  }
  const escaper = o.raw ? null : new TerminalEscaper();
  const write = async (chunk: Uint8Array | string): Promise<void> => {
    if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
  };
  try {
    const reader = res.body?.getReader();
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      await write(escaper ? escaper.push(next.value) : next.value);
    }
    if (escaper) await write(escaper.end());
  } catch (err) {
    process.stderr.write(`error: the output stream broke off: ${(err as Error).message}\n`);
    return EXIT.error;
  }
  return EXIT.ok;
}
