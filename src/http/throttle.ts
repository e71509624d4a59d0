/**
 * Slows guessing of the API token (SPEC §18: "failed logins are slowed per client and logged
 * without the attempted value"). Each client (remote address; an IPv6 client by its /64, which
 * one host can fill at will) may fail {@link FREE_FAILURES} times; every failure after that
 * locks it out for twice as long as the one before (1 s, 2 s, 4 s … up to
 * {@link MAX_LOCK_SECONDS}). While locked out, a client's attempts are not checked at all, right
 * token or wrong: they are answered 429 with `Retry-After`. A success clears its record, and a
 * record untouched for {@link FORGET_MS} is forgotten. At most {@link MAX_CLIENTS} clients are
 * tracked (the oldest dropped first), so a flood of addresses cannot grow memory.
 *
 * Logins (`POST /api/v1/session`) and bearer tokens share one record per client: guessing by
 * either counts. Time is passed in, so the policy is tested without waiting.
 */

/** Failures allowed before the first lock-out. */
export const FREE_FAILURES = 5;
/** Longest lock-out. */
export const MAX_LOCK_SECONDS = 900;
/** A client whose last failure is older than this starts afresh. */
export const FORGET_MS = 3_600_000;
/** Clients tracked at most. */
export const MAX_CLIENTS = 10_000;

interface Record {
  failures: number;
  lockedUntil: number;
  lastFailure: number;
}

/** What a failure led to. */
export interface Failure {
  /** Failures in a row of this client, this one included. */
  failures: number;
  /** Seconds the client is now locked out for; 0 when it is not. */
  lockedSeconds: number;
}

/** The client key of a remote address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64. */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!address.includes(':')) return address;
  // expand "::" to count groups, keep the first four (the /64)
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t]
    : h;
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** Failed credential attempts per client. */
export class FailureThrottle {
  private readonly clients = new Map<string, Record>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until `client` may try again (rounded up), or 0 when it may now. */
  retryAfter(client: string): number {
    const r = this.clients.get(client);
    if (!r) return 0;
    const left = r.lockedUntil - this.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /** Records a failed attempt of `client`. */
  fail(client: string): Failure {
    const now = this.now();
    let r = this.clients.get(client);
    if (!r || now - r.lastFailure > FORGET_MS) r = { failures: 0, lockedUntil: 0, lastFailure: 0 };
    this.clients.delete(client); // re-inserted: the map stays in order of last failure
    r.failures += 1;
    r.lastFailure = now;
    const over = r.failures - FREE_FAILURES;
    const lockedSeconds = over > 0 ? Math.min(MAX_LOCK_SECONDS, 2 ** Math.min(over - 1, 30)) : 0;
    if (lockedSeconds > 0) r.lockedUntil = now + lockedSeconds * 1000;
    this.clients.set(client, r);
    while (this.clients.size > MAX_CLIENTS) {
      const oldest = this.clients.keys().next().value as string;
      this.clients.delete(oldest);
    }
    return { failures: r.failures, lockedSeconds };
  }

  /** Clears `client` after a successful attempt. */
  succeed(client: string): void {
    this.clients.delete(client);
  }

  /** Clients tracked now (tests). */
  get size(): number {
    return this.clients.size;
  }
}
