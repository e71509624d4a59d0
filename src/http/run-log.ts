/**
 * `GET /api/v1/runs/{id}/log` (SPEC §11): a command run's captured output as
 * `text/plain`, already redacted and capped when it was written. With `?follow=1` the
 * response stays open and streams new output until the run has ended (or the daemon stops);
 * without, it is the output so far. A run of an HTTP job has no output: 404.
 */
import { open } from 'node:fs/promises';
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
}

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

/** The file from the start; with `done`, follows it until `done()` says the run has ended. */
function logStream(
  path: string,
  done: (() => Promise<boolean>) | null,
): ReadableStream<Uint8Array> {
  let offset = 0;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!cancelled) {
        const chunk = await readFrom(path, offset, CHUNK_BYTES);
        if (chunk.length > 0) {
          offset += chunk.length;
          controller.enqueue(chunk);
          return;
        }
        // the log is closed before the run's end is recorded: once ended, nothing more comes
        if (done === null || (await done())) {
          const rest = await readFrom(path, offset, CHUNK_BYTES);
          if (rest.length > 0) {
            offset += rest.length;
            controller.enqueue(rest);
            return;
          }
          controller.close();
          return;
        }
        await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
      }
    },
    cancel() {
      cancelled = true;
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
    const path = deps.logs?.path(id) ?? null;
    if (!run || path === null) return c.json(errorJson('not_found', `no run ${echo(id)}`), 404);
    const job = deps.scheduler.jobs().get(`${run.app}/${run.job}`);
    const hasLog = (await readFrom(path, 0, 1)).length > 0;
    if (!hasLog && job?.job.command === undefined)
      return c.json(
        errorJson(
          'not_found',
          `run ${id} has no captured output: only command jobs capture output`,
        ),
        404,
      );
    const done = async (): Promise<boolean> =>
      deps.scheduler.isStopping || (await deps.store.getRun(id))?.phase === 'ended';
    return new Response(logStream(path, follow ? done : null), {
      headers: {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    });
  });
}
