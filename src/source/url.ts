/**
 * Manifest sources (SPEC §6): a file path, `file://`, `https://`, or `http://` on loopback only.
 * URL sources are fetched with a signed GET (SPEC §4: `X-Cron-Signature` over
 * `<t>.GET.<path-and-query>.` with the first resolved `--secret-ref`), a 30 s deadline for the
 * whole exchange, a 10 MiB cap, and no redirects. A fetched manifest that holds a command job
 * is refused (SPEC §11): whoever serves a URL must not decide what runs on this host.
 */
import { fileURLToPath } from 'node:url';
import {
  parseManifestText,
  type Manifest,
  type ManifestError,
} from '../contract/manifest/index.js';
import { SIGNATURE_HEADER, sign } from '../contract/signature.js';
import { refForDisplay, resolveSecretRefs } from '../secrets/resolve.js';
import { loadManifestFile, MAX_MANIFEST_BYTES } from './file.js';

/** Default deadline of a manifest fetch. */
export const FETCH_TIMEOUT_MS = 30_000;

/**
 * Outcome of {@link loadManifestSource}: the manifest, or why not. `invalid` lists every
 * manifest error with its path; `fetch` is an unreachable or failing source (exit 1); `auth` is
 * a 401/403 answer to the signed GET (exit 4); `usage` a source cronix refuses to read (exit 2).
 */
export type ManifestSourceResult =
  | { ok: true; manifest: Manifest; source: string }
  | { ok: false; kind: 'invalid'; source: string; errors: ManifestError[] }
  | { ok: false; kind: 'fetch' | 'auth' | 'usage'; source: string; message: string };

/** Options of {@link loadManifestSource}. */
export interface SourceOptions {
  /** `--secret-ref` values; the first that resolves signs the GET. */
  secretRefs?: readonly string[];
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  maxBytes?: number;
  /** Current time in epoch ms (for the signature timestamp). */
  now?: () => number;
}

/** Whether `hostname` (as `URL.hostname` gives it) is a loopback address. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    h === '::1' ||
    /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(h)
  );
}

function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}

/** Reads at most `max` bytes of a response body; null when it is larger. */
async function readCapped(res: Response, max: number): Promise<Uint8Array | null> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (res.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function fetchManifest(
  url: URL,
  source: string,
  options: SourceOptions,
): Promise<ManifestSourceResult> {
  const fail = (kind: 'fetch' | 'auth' | 'usage', message: string): ManifestSourceResult => ({
    ok: false,
    kind,
    source,
    message,
  });
  const headers: Record<string, string> = { accept: 'application/json' };
  const refs = options.secretRefs ?? [];
  if (refs.length > 0) {
    const resolved = resolveSecretRefs(refs, options.env ? { env: options.env } : {});
    const secret = resolved.secrets[0];
    if (secret === undefined) {
      const why = resolved.unresolved.map((u) => `${refForDisplay(u.ref)}: ${u.reason}`).join('; ');
      return fail('fetch', `cannot sign the manifest request: no --secret-ref resolved (${why})`);
    }
    const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
    headers[SIGNATURE_HEADER] = sign({
      secret,
      method: 'GET',
      path: `${url.pathname}${url.search}`,
      timestamp,
    });
  }
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  const max = options.maxBytes ?? MAX_MANIFEST_BYTES;
  let body: Uint8Array | null;
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel().catch(() => undefined);
      return fail(
        'auth',
        `${source} answered ${res.status}: the server did not accept the request signature${refs.length === 0 ? ' (no --secret-ref was given, so the request was unsigned)' : '; check --secret-ref and the clocks of both hosts'}`,
      );
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      return fail(
        'fetch',
        `${source} answered ${res.status} redirecting to ${res.headers.get('location') ?? '?'}; redirects are not followed, use the final URL`,
      );
    }
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => undefined);
      return fail('fetch', `${source} answered HTTP ${res.status}; expected 200 with the manifest`);
    }
    body = await readCapped(res, max);
  } catch (err) {
    return fail(
      'fetch',
      `cannot fetch ${source}: ${causeOf(err)}${causeOf(err) === 'timed out' ? ` after ${timeoutMs / 1000} s` : ''}`,
    );
  }
  if (body === null)
    return fail('fetch', `${source}: the manifest is larger than ${max / 1024 / 1024} MiB`);
  const text = Buffer.from(body).toString('utf8');
  const parsed = parseManifestText(text, source);
  if (!parsed.ok) return { ok: false, kind: 'invalid', source, errors: parsed.errors };
  const refused = commandJobErrors(text, source);
  return refused.length > 0
    ? { ok: false, kind: 'invalid', source, errors: refused }
    : { ok: true, manifest: parsed.manifest, source };
}

/**
 * One error per command job of a fetched (valid) manifest, at its path in the document as
 * written (`jobs/N/command`).
 */
function commandJobErrors(text: string, source: string): ManifestError[] {
  const raw = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text) as {
    jobs: Record<string, unknown>[];
  };
  return raw.jobs.flatMap((job, i) =>
    Object.hasOwn(job, 'command')
      ? [
          {
            path: `jobs/${i}/command`,
            message:
              `command jobs are accepted only from local manifest files, and this manifest was fetched from ${source}: ` +
              'whoever serves a URL must not decide what runs on this host. Apply it from a file (cronix apply ./manifest.json)',
          },
        ]
      : [],
  );
}

/** Loads and parses a manifest from a path or URL; never throws for expected failures. */
export async function loadManifestSource(
  source: string,
  options: SourceOptions = {},
): Promise<ManifestSourceResult> {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(source)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'file') {
    let path = source;
    if (scheme === 'file') {
      try {
        path = fileURLToPath(source);
      } catch (err) {
        return {
          ok: false,
          kind: 'usage',
          source,
          message: `${source} is not a usable file:// URL: ${(err as Error).message}`,
        };
      }
    }
    const r = await loadManifestFile(path);
    return r.ok
      ? { ok: true, manifest: r.manifest, source }
      : { ok: false, kind: 'invalid', source, errors: r.errors };
  }
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return {
      ok: false,
      kind: 'usage',
      source,
      message: `manifest source ${source} is not a valid URL`,
    };
  }
  if (scheme === 'http' && !isLoopbackHost(url.hostname)) {
    return {
      ok: false,
      kind: 'usage',
      source,
      message: `refusing http://${url.host}: plain http is allowed on loopback only (localhost, 127.0.0.0/8, ::1), because the manifest decides what runs; use https://`,
    };
  }
  if (scheme !== 'http' && scheme !== 'https') {
    return {
      ok: false,
      kind: 'usage',
      source,
      message: `manifest source scheme "${scheme}:" is not supported; use a file path, file://, https:// or loopback http://`,
    };
  }
  return fetchManifest(url, source, options);
}
