/**
 * The shim's reports to a `cronix serve --watch` (SPEC §15), loaded only when a report URL is
 * configured. Reports are delivered one after the other, each within
 * {@link REPORT_TIMEOUT_MS} of being made: under the spool lock, the spooled reports of this
 * host go first, in order, then this one (it is spooled first, so a crash mid-send loses
 * nothing — the server records a run id once, so a resend is harmless). Whatever cannot be sent
 * in time stays in the spool for the next report from this host. Never throws; nothing here
 * changes the fire's outcome or exit code.
 *
 * Answers: 2xx → sent; 400, 404, 413, 422 (this report is refused — malformed, too large, or
 * for an app or job the server does not watch — and would block every later report behind it)
 * → dropped with a warning; anything else (401 while a secret is being rotated, 5xx, no
 * connection, no answer within the budget) → kept. A destination
 * that failed is not tried again in the same drain; reports to other destinations still go.
 */
import { REPORT_TIMEOUT_MS, reportBody, type Report } from '../contract/report.js';
import { reportEndpoint } from '../contract/report-target.js';
import { sign, SIGNATURE_HEADER } from '../contract/signature.js';
import { createHttpTransport } from '../fire/http-transport.js';
import type { Transport } from '../fire/types.js';
import { resolveSecretRefs } from '../secrets/resolve.js';
import { ReportSpool, type SpooledReport } from './report-spool.js';

/** A log line of the reporter (the shim's logger, event `report`). */
export type ReportLog = (
  level: 'info' | 'warn',
  msg: string,
  fields: Record<string, unknown>,
) => void;

/** What the reporter needs. */
export interface ReporterOptions {
  /** The base URL (`--report-to`, `$CRONIX_REPORT_URL` or the spec's `report_to`). */
  url: string;
  /** Refs of the report secret; resolved at send time. */
  secretRefs: string[];
  stateDir: string;
  /** Host identity, for the spool lock's holder record. */
  host: string;
  env: NodeJS.ProcessEnv;
  log: ReportLog;
  /** Per-report budget (default {@link REPORT_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Test seam: the HTTP transport (default a keep-alive `node:http` client). */
  transport?: Transport;
}

/** Status codes that refuse this report for good: it is dropped. */
const REFUSED = new Set([400, 404, 413, 422]);

/** How one send went. */
type Sent = 'sent' | 'refused' | 'failed';

/** Sends a host's reports; one per fire event, in order. */
export class ShimReporter {
  private chain: Promise<void> = Promise.resolve();
  private readonly spool: ReportSpool;
  private readonly timeoutMs: number;
  private transport: Transport | undefined;
  private readonly secrets = new Map<string, string | null>();

  constructor(private readonly o: ReporterOptions) {
    this.spool = new ReportSpool(o.stateDir, o.host);
    this.timeoutMs = o.timeoutMs ?? REPORT_TIMEOUT_MS;
  }

  /** Queues `report`: it is delivered (or spooled) within the budget from now. */
  send(report: Report): void {
    const deadline = Date.now() + this.timeoutMs;
    const spooled: SpooledReport = {
      url: reportEndpoint(this.o.url),
      secretRefs: this.o.secretRefs,
      body: JSON.stringify(reportBody(report)),
    };
    this.chain = this.chain.then(() =>
      this.deliver(spooled, report, deadline).catch((err: unknown) => {
        this.o.log('warn', `report ${report.kind} not sent: ${(err as Error).message}`, {
          report_kind: report.kind,
        });
      }),
    );
  }

  /** Waits for every queued report (each is bounded by its own deadline); never rejects. */
  async settle(): Promise<void> {
    await this.chain;
    await this.transport?.close?.().catch(() => undefined);
    this.transport = undefined;
  }

  private async deliver(r: SpooledReport, report: Report, deadline: number): Promise<void> {
    try {
      this.spool.add(r); // first, so that a crash mid-send loses nothing
    } catch (err) {
      // no spool (an unwritable state dir): one direct try, in no particular order
      this.o.log('warn', `report spool unusable (${(err as Error).message}); sending directly`, {});
      await this.post(r, 0, deadline);
      return;
    }
    const lease = await this.spool.lock(deadline);
    if (lease === null) {
      this.o.log(
        'warn',
        `report ${report.kind} spooled: another shim is sending this host's reports`,
        {
          report_kind: report.kind,
        },
      );
      return;
    }
    try {
      const left = await this.drain(deadline);
      if (left > 0) {
        this.o.log('warn', `report ${report.kind}: ${left} report(s) wait in the spool`, {
          report_kind: report.kind,
          spooled: left,
        });
      }
    } finally {
      await lease.release();
    }
  }

  /** Sends the spool in order until it is empty, every destination failed, or the deadline. */
  private async drain(deadline: number): Promise<number> {
    const before = this.spool.dropped();
    let items = this.spool.trim(this.spool.list());
    let dropped = this.spool.dropped();
    if (dropped > before) {
      this.o.log('warn', `report spool full: dropped the ${dropped - before} oldest report(s)`, {
        spool_dropped: dropped,
      });
    }
    const down = new Set<string>();
    const seen = new Set<string>();
    let kept = 0;
    while (items.length > 0) {
      let progress = false;
      for (const item of items) {
        seen.add(item.name);
        if (Date.now() >= deadline) {
          kept++;
          continue;
        }
        const r = this.spool.read(item);
        if (r === null) continue;
        if (down.has(r.url)) {
          kept++;
          continue;
        }
        const carried = dropped;
        const outcome = await this.post(r, carried, deadline);
        if (outcome === 'failed') {
          down.add(r.url);
          kept++;
          continue;
        }
        this.spool.remove(item);
        progress = true;
        if (outcome === 'sent' && carried > 0) {
          this.spool.setDropped(this.spool.dropped() - carried);
          dropped = 0;
        }
      }
      // reports added meanwhile by shims that did not get the lock go too, while time is left
      if (!progress || Date.now() >= deadline) break;
      items = this.spool.list().filter((i) => !seen.has(i.name));
    }
    return kept;
  }

  /** The signing secret of `refs`, resolved once per process; null when none resolves. */
  private secretOf(refs: string[]): string | null {
    const key = refs.join('\n');
    if (!this.secrets.has(key)) {
      const resolved = resolveSecretRefs(refs, { env: this.o.env });
      this.secrets.set(key, resolved.secrets[0] ?? null);
      if (resolved.secrets.length === 0) {
        const why = resolved.unresolved.map((u) => `${u.ref}: ${u.reason}`).join('; ');
        this.o.log(
          'warn',
          `no report secret resolved (${why || 'no refs'}); reports stay in the spool`,
          {},
        );
      }
    }
    return this.secrets.get(key) ?? null;
  }

  /** One signed POST; `dropped` (when > 0) rides along as `spool_dropped`. */
  private async post(r: SpooledReport, dropped: number, deadline: number): Promise<Sent> {
    const secret = this.secretOf(r.secretRefs);
    if (secret === null) return 'failed';
    let body = r.body;
    if (dropped > 0) {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      parsed['spool_dropped'] = (Number(parsed['spool_dropped']) || 0) + dropped;
      body = JSON.stringify(parsed);
    }
    let path: string;
    try {
      const u = new URL(r.url);
      path = `${u.pathname}${u.search}`;
    } catch {
      return 'refused';
    }
    this.transport ??= this.o.transport ?? createHttpTransport({ keepAlive: true });
    const result = await this.transport.send(
      {
        method: 'POST',
        url: r.url,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'cronix-trigger',
          [SIGNATURE_HEADER]: sign({
            secret,
            method: 'POST',
            path,
            body,
            timestamp: Math.floor(Date.now() / 1000),
          }),
        },
        body,
      },
      { timeoutMs: Math.max(1, deadline - Date.now()), maxBodyBytes: 4096 },
    );
    if (result.kind === 'response') {
      if (result.status >= 200 && result.status < 300) return 'sent';
      const excerpt = result.bodyExcerpt.slice(0, 300);
      if (REFUSED.has(result.status)) {
        this.o.log('warn', `report refused by ${r.url} (HTTP ${result.status}); dropped`, {
          status: result.status,
          body_excerpt: excerpt,
        });
        return 'refused';
      }
      this.o.log('warn', `report to ${r.url} failed (HTTP ${result.status}); kept in the spool`, {
        status: result.status,
        body_excerpt: excerpt,
      });
      return 'failed';
    }
    const why = result.kind === 'network-error' ? result.message : result.kind;
    this.o.log('warn', `report to ${r.url} failed (${why}); kept in the spool`, { err: why });
    return 'failed';
  }
}
