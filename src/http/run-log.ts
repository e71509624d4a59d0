/**
 * `GET /api/v1/runs/{id}/log` (SPEC §11): a command run's captured output as
 * `text/plain`, already redacted and capped when it was written. With `?follow=1` the
 * response stays open and streams new output until the run has ended (or the daemon stops, or
 * the credential that opened it is revoked or expires: `stream-guard.ts`; then a last cronix line
 * says so); without, it is the output so far. A run of an HTTP job has no output: 404.
 */
import { open } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Hono } from 'hono';
import { echo } from '../contract/echo.js';
import type { DaemonControl } from '../daemon/control.js';
import type { RunLogs } from '../daemon/run-logs.js';
import type { Store } from '../daemon/store/types.js';
import { errorJson } from './serialize.js';

/** How often a follow checks for new output and for the run's end. */
export const FOLLOW_POLL_MS = 200;
/** Bytes read from the file per chunk. */
const CHUNK_BYTES = 64 * 1024;

/** What the route needs. */
export interface RunLogDeps {
  scheduler: DaemonControl;
  store: Store;
  logs: RunLogs | undefined;
  /**
   * Subscribes `end` to the request's credential no longer holding (`stream-guard.ts`); returns
   * the unsubscribe. Absent: a follow is ended by the run's end only.
   */
  watch?: (c: Context, end: () => void) => () => void;
}

/** The last line of a follow whose credential stopped holding. */
export const CREDENTIAL_ENDED_LINE =
  '\n--- cronix: the token or session of this request was revoked or has expired; the output is not followed further ---\n';

/** Up to `max` bytes of `path` from `offset`; empty when there are none (or no file yet). */
async function readFrom(path: string, offset: number, max: number): Promise<Uint8Array> {
  let file;
  try {
    file = await open(path, 'r');
  } catch {
    return new Uint8Array(0);
  }
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await file.read(buf, 0, max, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The file from the start; with `done`, follows it until `done()` says the run has ended, or
 * the client leaves (`socket` ends: the server keeps half-open connections, so a follow of a
 * silent command would otherwise poll for a client that is gone until the run ends), or `watch`
 * says the credential no longer holds (then one last cronix line says so). At the run's end,
 * `lost()` says whether the daemon could not write part of the output (a full disk): then one
 * last cronix line says so.
 */
function logStream(
  path: string,
  done: (() => Promise<boolean>) | null,
  lost: () => Promise<string | null>,
  socket: Socket | undefined,
  watch: ((end: () => void) => () => void) | undefined,
): ReadableStream<Uint8Array> {
  let offset = 0;
  let cancelled = false;
  let revoked = false;
  const leave = (): void => {
    cancelled = true;
  };
  let unwatch = (): void => undefined;
  if (done !== null) {
    socket?.once('end', leave);
    if (watch) unwatch = watch(() => (revoked = true));
  }
  const stop = (): void => {
    socket?.off('end', leave);
    unwatch();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!cancelled) {
        if (revoked) {
          stop();
          controller.enqueue(new TextEncoder().encode(CREDENTIAL_ENDED_LINE));
          controller.close();
          return;
        }
        const chunk = await readFrom(path, offset, CHUNK_BYTES);
        if (chunk.length > 0) {
          offset += chunk.length;
          controller.enqueue(chunk);
          return;
        }
        // the log is closed before the run's end is recorded: once ended, nothing more comes
        if (done === null || (await done())) {
          stop();
          const rest = await readFrom(path, offset, CHUNK_BYTES);
          if (rest.length > 0) {
            offset += rest.length;
            controller.enqueue(rest);
            return;
          }
          const why = await lost();
          if (why !== null)
            controller.enqueue(
              new TextEncoder().encode(
                `\n--- cronix: output lost: ${why}; the output after this point was not kept ---\n`,
              ),
            );
          controller.close();
          return;
        }
        await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
      }
      stop();
      try {
        controller.close(); // the client left
      } catch {
        // cancelled by the server: already closed
      }
    },
    cancel() {
      cancelled = true;
      stop();
    },
  });
}

function bad(c: Context, path: string, message: string): Response {
  return c.json(errorJson('invalid_request', message, path), 400);
}

/** Adds the route to the API. */
export function registerRunLog(app: Hono, deps: RunLogDeps): void {
  app.get('/api/v1/runs/:id/log', async (c) => {
    const q = c.req.query();
    for (const k of Object.keys(q))
      if (k !== 'follow') return bad(c, k.slice(0, 200), `unknown query parameter ${echo(k)}`);
    const followText = q['follow'] ?? '0';
    if (!['0', '1', 'true', 'false'].includes(followText))
      return bad(c, 'follow', `expected 1 or 0, found ${echo(followText)}`);
    const follow = followText === '1' || followText === 'true';
    const id = c.req.param('id');
    const run = await deps.store.getRun(id);
    if (run?.trigger === 'host') {
      // a host's run: the output tail its end report carried, from the ledger (SPEC §15)
      const output = await deps.store.runOutput(id);
      if (output === null)
        return c.json(errorJson('not_found', `run ${id} has no reported output`), 404);
      return c.text(output, 200, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
    }
    const path = deps.logs?.path(id) ?? null;
    if (!run || path === null) return c.json(errorJson('not_found', `no run ${echo(id)}`), 404);
    const job = deps.scheduler.jobs().get(`${run.app}/${run.job}`);
    const hasLog = (await readFrom(path, 0, 1)).length > 0;
    // a service's start (SPEC §17) captures output like a command job's run
    if (!hasLog && job?.job.command === undefined && run.trigger !== 'service')
      return c.json(
        errorJson(
          'not_found',
          `run ${id} has no captured output: only command jobs capture output`,
        ),
        404,
      );
    const done = async (): Promise<boolean> =>
      deps.scheduler.isStopping || (await deps.store.getRun(id))?.phase === 'ended';
    const lost = async (): Promise<string | null> =>
      (await deps.store.getRun(id))?.outputLost ?? null;
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    const subscribe = deps.watch;
    const watch = subscribe && ((end: () => void) => subscribe(c, end));
    return new Response(logStream(path, follow ? done : null, lost, socket, watch), {
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        ...(run.outputLost !== null ? { 'x-cronix-output-lost': 'true' } : {}),
      },
    });
  });
}
