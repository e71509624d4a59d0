/**
 * One EventSource for the whole app (`/api/v1/events`). The browser reconnects
 * by itself and sends `Last-Event-ID`, so the daemon replays what was missed;
 * when it cannot (`reset`), every page reloads its data.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { checkSession, type NotificationJson, type RunJson } from './api.js';

/** A change the stream reports. */
export type LiveEvent =
  | { type: 'run'; change: 'recorded' | 'started' | 'ended'; run: RunJson }
  | { type: 'job'; app: string; job: string; paused: boolean }
  | { type: 'jobs' }
  | { type: 'notification'; notification: NotificationJson }
  | { type: 'reset' };

type Listener = (e: LiveEvent) => void;
const listeners = new Set<Listener>();
const statusListeners = new Set<(live: boolean) => void>();
let live = false;

function setLive(v: boolean): void {
  live = v;
  for (const f of statusListeners) f(v);
}

function emit(e: LiveEvent): void {
  for (const f of listeners) f(e);
}

let opened = false;
/** The stream now open, and the pending re-open after the browser gave up on one. */
let current: EventSource | null = null;
let retry: ReturnType<typeof setTimeout> | undefined;

/** Opens the stream (once). */
export function connectLive(): void {
  if (opened) return;
  opened = true;
  open(false);
}

/**
 * Closes the stream and stops re-opening it: the session ended (logged out or expired), and
 * the stream needs one, so retrying would only collect 401s until the next login.
 */
export function disconnectLive(): void {
  opened = false;
  clearTimeout(retry);
  current?.close();
  current = null;
  setLive(false);
}

/**
 * The browser retries a dropped stream by itself, but gives up for good on an
 * HTTP error (a daemon answering 503 while it restarts): then a new stream is
 * opened after a pause, and pages reload, since what was missed is unknown.
 */
function open(afterGivingUp: boolean): void {
  const es = new EventSource('/api/v1/events');
  current = es;
  es.addEventListener('ready', () => {
    setLive(true);
    if (afterGivingUp) emit({ type: 'reset' });
    afterGivingUp = false;
  });
  es.addEventListener('error', () => {
    setLive(false);
    if (es.readyState === EventSource.CLOSED && opened && current === es) {
      // refused: a daemon restarting (503), or a session that ended (401: back to the login)
      void checkSession();
      retry = setTimeout(() => open(true), 3_000);
    }
  });
  es.addEventListener('run', (m) => {
    const d = JSON.parse((m as MessageEvent<string>).data) as {
      change: 'recorded' | 'started' | 'ended';
      run: RunJson;
    };
    emit({ type: 'run', change: d.change, run: d.run });
  });
  es.addEventListener('job', (m) => {
    const d = JSON.parse((m as MessageEvent<string>).data) as {
      app: string;
      job: string;
      paused: boolean;
    };
    emit({ type: 'job', ...d });
  });
  es.addEventListener('jobs', () => emit({ type: 'jobs' }));
  es.addEventListener('notification', (m) => {
    const d = JSON.parse((m as MessageEvent<string>).data) as { notification: NotificationJson };
    emit({ type: 'notification', notification: d.notification });
  });
  es.addEventListener('reset', () => emit({ type: 'reset' }));
}

/** Calls `f` for every live event while the component is mounted. */
export function useLive(f: Listener): void {
  const ref = useRef(f);
  ref.current = f;
  useEffect(() => {
    const l: Listener = (e) => ref.current(e);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
}

/** Whether the stream is connected now. */
export function isLive(): boolean {
  return live;
}

/** Calls `f` each time the stream (re)connects; returns the unsubscribe. */
export function onLive(f: () => void): () => void {
  const l = (v: boolean): void => {
    if (v) f();
  };
  statusListeners.add(l);
  return () => void statusListeners.delete(l);
}

/** Whether the stream is connected. */
export function useLiveStatus(): boolean {
  const [v, setV] = useState(live);
  useEffect(() => {
    statusListeners.add(setV);
    setV(live);
    return () => void statusListeners.delete(setV);
  }, []);
  return v;
}
