/**
 * Which `Host` a request may name (SPEC §9 item 9). A page on `attacker.example` whose name the
 * attacker re-points at 127.0.0.1 (DNS rebinding) reaches the daemon with
 * `Host: attacker.example`: refusing every name but the loopback names, the listen address and
 * the configured public ones (`--public-url`, `--allowed-host`) keeps such pages out, whatever
 * the credentials. IP literals other than loopback and the listen address must be configured
 * too (a scraper that connects by the pod's address: `--allowed-host $(POD_IP)`).
 */

/** One allowed name: any port, or exactly `port`. */
interface HostRule {
  name: string;
  port: number | null;
}

/** Splits `name[:port]` / `[v6]:port` into a lower-case name (no brackets, no final dot) and port. */
export function parseHost(text: string): HostRule | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s@]+))(?::(\d{1,5}))?$/.exec(text.trim());
  if (!m) return null;
  const port = m[3] === undefined ? null : Number(m[3]);
  if (port !== null && port > 65535) return null;
  const name = (m[1] ?? (m[2] as string)).toLowerCase().replace(/\.$/, '');
  return name === '' ? null : { name, port };
}

const isLoopbackName = (name: string): boolean =>
  name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);

/** The names a daemon answers to. */
export class AllowedHosts {
  private readonly rules: HostRule[];

  /**
   * @param listenHost the address the daemon listens on; a specific one (not `0.0.0.0` / `::`)
   *   is allowed as a name
   * @param configured `--allowed-host` values (`name`, `name:port`, `[v6]:port`) and the host of
   *   `--public-url`; each must parse ({@link parseHost}), else the constructor throws naming it
   */
  constructor(listenHost: string, configured: readonly string[] = []) {
    this.rules = [];
    for (const entry of configured) {
      const rule = parseHost(entry);
      if (rule === null)
        throw new Error(
          `--allowed-host: expected a host name or address, optionally with :PORT (cron.example.com, 10.0.0.5:7070, [fd00::5]), found ${JSON.stringify(entry.slice(0, 200))}`,
        );
      this.rules.push(rule);
    }
    const listen = listenHost.toLowerCase();
    if (listen !== '0.0.0.0' && listen !== '::' && listen !== '')
      this.rules.push({ name: listen, port: null });
  }

  /** Whether a request naming `host` (its `Host` header) is for this daemon. */
  allows(host: string | undefined): boolean {
    if (host === undefined) return false;
    const h = parseHost(host);
    if (h === null) return false;
    if (isLoopbackName(h.name)) return true;
    return this.rules.some((r) => r.name === h.name && (r.port === null || r.port === h.port));
  }
}

/** The host (`name[:port]`) of a `--public-url`, or an error message naming the value. */
export function publicUrlHost(url: string): string | { error: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return {
      error: `--public-url: expected an http(s) URL such as https://cron.example.com, found ${JSON.stringify(url.slice(0, 200))}`,
    };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return {
      error: `--public-url: expected an http:// or https:// URL, found ${JSON.stringify(url.slice(0, 200))}`,
    };
  return u.hostname;
}
