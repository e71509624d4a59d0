/** Sending host-mode reports (SPEC §15) to a `cronix serve --watch` in tests. */
import { REPORT_PATH, reportBody, type Report } from '../../src/contract/report.js';
import { sign, SIGNATURE_HEADER } from '../../src/contract/signature.js';

/** A report secret long enough for `serve` (16 bytes or more). */
export const REPORT_SECRET = 'report-secret-0123456789';

/** Options of {@link sendReport}. */
export interface SendOptions {
  secret?: string | null;
  /** Unix seconds to sign with; default now. */
  timestamp?: number;
  /** The raw body instead of the report's wire form. */
  raw?: string;
  path?: string;
}

/** POSTs a signed report; the status and the JSON answer. */
export async function sendReport(
  url: string,
  report: Report | null,
  o: SendOptions = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const path = o.path ?? REPORT_PATH;
  const body = o.raw ?? JSON.stringify(report === null ? {} : reportBody(report));
  const secret = o.secret === undefined ? REPORT_SECRET : o.secret;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret !== null)
    headers[SIGNATURE_HEADER] = sign({
      secret,
      method: 'POST',
      path,
      body,
      timestamp: o.timestamp ?? Math.floor(Date.now() / 1000),
    });
  const res = await fetch(`${url}${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { text };
  }
  return { status: res.status, json };
}
