/**
 * Secret refs (SPEC §4): `env:NAME`, `file:/path`, `raw:literal`; a bare ref
 * means `env:`. Resolution reads the environment and the disk, so it lives
 * outside the pure contract. Reasons for unresolved refs name the ref and the
 * cause, never a secret value or file contents.
 */
import { readFileSync, statSync } from 'node:fs';

/** Where a secret ref points. */
export type SecretRefKind = 'env' | 'file' | 'raw';

/** A parsed secret ref. */
export interface SecretRef {
  kind: SecretRefKind;
  /** Env var name, file path or literal value, depending on `kind`. */
  value: string;
}

/** A ref that produced no secret, with a loggable reason. */
export interface UnresolvedSecretRef {
  ref: string;
  reason: string;
}

/** Outcome of {@link resolveSecretRefs}: values in ref order, plus what failed. */
export interface ResolvedSecrets {
  secrets: string[];
  /** The ref each entry of `secrets` came from (same order). */
  resolvedRefs: string[];
  unresolved: UnresolvedSecretRef[];
}

/** Injected world for {@link resolveSecretRefs}; defaults to the real process. */
export interface SecretResolverDeps {
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => string | Buffer;
}

/** Replacement text used by {@link redact}. */
export const REDACTED = '[REDACTED]';

const PREFIXES: readonly SecretRefKind[] = ['env', 'file', 'raw'];

/**
 * Splits a ref into kind and value. `env:NAME`, `file:/path` and
 * `raw:literal` are explicit; anything else (including a ref whose prefix is
 * not one of those) is an env var name.
 */
export function parseSecretRef(ref: string): SecretRef {
  const colon = ref.indexOf(':');
  if (colon > 0) {
    const prefix = ref.slice(0, colon);
    if ((PREFIXES as readonly string[]).includes(prefix)) {
      return { kind: prefix as SecretRefKind, value: ref.slice(colon + 1) };
    }
  }
  return { kind: 'env', value: ref };
}

function trimTrailingNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    return err.code;
  }
  return 'read error';
}

type One = { ok: true; secret: string } | { ok: false; reason: string };

function resolveOne(ref: SecretRef, deps: SecretResolverDeps): One {
  switch (ref.kind) {
    case 'env': {
      if (ref.value === '') return { ok: false, reason: 'env ref has no variable name' };
      const value = deps.env[ref.value];
      if (value === undefined) return { ok: false, reason: `env var ${ref.value} is not set` };
      if (value === '') return { ok: false, reason: `env var ${ref.value} is empty` };
      return { ok: true, secret: value };
    }
    case 'file': {
      if (ref.value === '') return { ok: false, reason: 'file ref has no path' };
      let text: string;
      try {
        const raw = deps.readFile(ref.value);
        text = typeof raw === 'string' ? raw : raw.toString('utf8');
      } catch (err) {
        return { ok: false, reason: `file not readable: ${errorCode(err)}` };
      }
      const secret = trimTrailingNewline(text);
      if (secret === '') return { ok: false, reason: 'file is empty' };
      return { ok: true, secret };
    }
    case 'raw':
      if (ref.value === '') return { ok: false, reason: 'raw ref is empty' };
      return { ok: true, secret: ref.value };
  }
}

/**
 * Reads a secret file: only a regular file or a symlink to one (a directory
 * fails with EISDIR as before). Opening a FIFO would block, and a character
 * device may never end; a one-shot process must not hang on its secret.
 */
function readRegularFile(path: string): Buffer {
  const stat = statSync(path);
  if (!stat.isFile() && !stat.isDirectory()) {
    throw Object.assign(new Error(`${path} is not a regular file`), {
      code: 'not a regular file',
    });
  }
  return readFileSync(path);
}

const defaultDeps: SecretResolverDeps = {
  env: process.env,
  readFile: readRegularFile,
};

/**
 * Resolves refs in order. A ref that yields nothing (unset or empty env var,
 * unreadable or empty file, empty literal) is reported in `unresolved` with a
 * reason; `secrets` keeps the order of the refs that resolved, so index 0 is
 * the signing secret. Only one trailing `\n` or `\r\n` is trimmed from files.
 */
export function resolveSecretRefs(
  refs: readonly string[],
  deps: Partial<SecretResolverDeps> = {},
): ResolvedSecrets {
  const world: SecretResolverDeps = { ...defaultDeps, ...deps };
  const secrets: string[] = [];
  const resolvedRefs: string[] = [];
  const unresolved: UnresolvedSecretRef[] = [];
  for (const ref of refs) {
    const result = resolveOne(parseSecretRef(ref), world);
    if (result.ok) {
      secrets.push(result.secret);
      resolvedRefs.push(ref);
    } else unresolved.push({ ref, reason: result.reason });
  }
  return { secrets, resolvedRefs, unresolved };
}

/**
 * Shortest secret accepted, in UTF-8 bytes. An HMAC-SHA256 key this short is a
 * misconfiguration (guessable), and redacting a very short value from logs
 * would rewrite unrelated text, so such a secret is refused, not used.
 */
export const MIN_SECRET_BYTES = 16;

/**
 * Checks every resolved secret against {@link MIN_SECRET_BYTES}. Returns null
 * when all are long enough, else one message naming each short ref (as
 * {@link refForDisplay} shows it) and its length — never the value. The
 * trigger shim exits 3 with it; `cronix serve` should refuse to start with it.
 */
export function shortSecretsError(resolved: ResolvedSecrets): string | null {
  const short: string[] = [];
  resolved.secrets.forEach((secret, i) => {
    const bytes = Buffer.byteLength(secret, 'utf8');
    if (bytes < MIN_SECRET_BYTES) {
      short.push(`${refForDisplay(resolved.resolvedRefs[i] ?? '?')} resolves to ${bytes} bytes`);
    }
  });
  if (short.length === 0) return null;
  return (
    `secret too short: ${short.join('; ')}; an HMAC signing secret needs at least ` +
    `${MIN_SECRET_BYTES} bytes (generate one with "openssl rand -hex 32")`
  );
}

/**
 * A ref as it may be shown: `raw:` refs carry their secret inline, so their
 * value is replaced by {@link REDACTED}; other refs are names, shown as is.
 */
export function refForDisplay(ref: string): string {
  const parsed = parseSecretRef(ref);
  return parsed.kind === 'raw' && ref.startsWith('raw:') ? `raw:${REDACTED}` : ref;
}

/**
 * Replaces every occurrence of every non-empty secret in `text` with
 * `[REDACTED]`. Longer secrets are replaced first so a secret that contains
 * another is fully hidden.
 */
export function redact(text: string, secrets: readonly string[]): string {
  // the common case, no secret in the text (every run's response excerpt): nothing to copy or
  // sort — 1.5 % of a 10,000 burst's CPU went to the set, sort and split/join below
  if (!secrets.some((s) => s.length > 0 && text.includes(s))) return text;
  const ordered = [...new Set(secrets)].filter((s) => s.length > 0);
  ordered.sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of ordered) out = out.split(secret).join(REDACTED);
  return out;
}
