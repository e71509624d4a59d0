/**
 * Readiness checks of an instance (SPEC §17): `http_get` (a 2xx answer) or `tcp` (a connection
 * accepted), tried until they pass or `timeout_seconds` have gone by, `{instance}` replaced by the
 * instance index. One probe at a time, each under its own short deadline.
 */
import { connect } from 'node:net';
import { parseHostPort, readyAddress } from '../../contract/manifest/index.js';
import type { EffectiveService } from '../../contract/manifest/effective.js';

/** A single probe's deadline. */
const PROBE_TIMEOUT_MS = 2000;
/** Pause between probes: from this, doubling, at most {@link MAX_PAUSE_MS}. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 1000;

type Ready = NonNullable<EffectiveService['ready']>;

/** One `tcp` probe: true when a connection was accepted. */
function probeTcp(address: string): Promise<boolean> {
  const target = parseHostPort(address);
  if (target === null) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** One `http_get` probe: true on a 2xx answer. */
async function probeHttp(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      redirect: 'manual',
    });
    await res.body?.cancel().catch(() => undefined);
    return res.status >= 200 && res.status <= 299;
  } catch {
    return false;
  }
}

/** The address a check probes for `instance`, for messages. */
export function readyTarget(ready: Ready, instance: number): string {
  return ready.http_get !== null
    ? `GET ${readyAddress(ready.http_get, instance)}`
    : `tcp ${readyAddress(ready.tcp ?? '', instance)}`;
}

/**
 * Probes until the check passes (true), `timeout_seconds` pass or `signal` aborts (false).
 */
export async function waitReady(
  ready: Ready,
  instance: number,
  signal: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + ready.timeout_seconds * 1000;
  const probe =
    ready.http_get !== null
      ? () => probeHttp(readyAddress(ready.http_get as string, instance))
      : () => probeTcp(readyAddress(ready.tcp ?? '', instance));
  let pause = FIRST_PAUSE_MS;
  while (!signal.aborted && Date.now() < deadline) {
    if (await probe()) return !signal.aborted;
    const left = deadline - Date.now();
    if (left <= 0) break;
    await new Promise<void>((r) => {
      const t = setTimeout(r, Math.min(pause, left));
      signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
    });
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  }
  return false;
}
