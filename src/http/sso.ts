/**
 * Single sign-on for the web UI (SPEC §18): OpenID Connect, authorization code with PKCE (S256),
 * `state` and `nonce`, through **openid-client** (v6, by the author of `jose` and `oidc-provider`,
 * an OpenID-certified relying party, no dependencies beyond `oauth4webapi` and `jose`): discovery,
 * the authorization URL, the code exchange and the ID token's issuer, audience, expiry, nonce and
 * — with `enableNonRepudiationChecks` — its signature against the provider's JWKS. Nothing of
 * the protocol is written here; this file keeps the login's state and maps the user to a role.
 *
 * - `GET /api/v1/sso/login` makes a state, a nonce and a PKCE verifier, keeps them in the store
 *   (`login_states`, 10 minutes: whichever replica the browser comes back to can finish it),
 *   binds them to the browser with an `HttpOnly; SameSite=Lax` cookie holding the state (Lax:
 *   the provider's redirect back is a cross-site navigation), and redirects to the provider.
 * - `GET /api/v1/sso/callback` needs the cookie's state to equal the query's (the login began in
 *   this browser), takes the state from the store in one step (a replayed state finds nothing,
 *   on any replica), exchanges the code and verifies the ID token, reads the role claim
 *   (`--oidc-role-claim`, a string or a list; from the ID token, else from UserInfo) and maps its
 *   values with `--oidc-role-map value=role` (the highest wins; no match: refused), then opens a
 *   session carrying the user (`preferred_username`, else `email`, else `sub`) and the role, and
 *   redirects to the UI.
 * - A refused callback is 401 (403 without a role) in the §7 error shape, counts against the
 *   client in the same throttle as wrong tokens, and is logged with its reason, never with the
 *   code, state or token tried. The token login stays available.
 * - An `http://` issuer is accepted only on a loopback address (a provider on this host, tests).
 */
import type { Context, Hono } from 'hono';
import * as oidc from 'openid-client';
import { cut } from '../contract/echo.js';
import type { DaemonControl } from '../daemon/control.js';
import { roleAtLeast, ROLES, type Role } from '../daemon/store/access-types.js';
import type { Store } from '../daemon/store/types.js';
import type { Access } from './access.js';
import { auditPublic } from './authorize.js';
import { errorJson } from './serialize.js';
import { isSecure, readCookie, sessionCookie } from './session.js';

/** What `serve --oidc-*` configures. */
export interface SsoConfig {
  issuer: string;
  clientId: string;
  /** The resolved client secret; absent: a public client (PKCE alone). */
  clientSecret?: string;
  roleClaim: string;
  /** Claim value → role. */
  roleMap: ReadonlyMap<string, Role>;
  /** `--public-url`: the redirect URI is `<public-url>/api/v1/sso/callback`; default the request's origin. */
  publicUrl?: string;
}

/** The cookie binding a begun login to its browser. */
export const SSO_COOKIE = 'cronix_sso';
/** How long a begun login can be finished. */
export const LOGIN_TTL_MS = 10 * 60_000;
const CALLBACK = '/api/v1/sso/callback';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Parses `--oidc-role-map` entries `value=role`.
 * @returns the map, or the error naming the entry
 */
export function parseRoleMap(entries: readonly string[]): Map<string, Role> | string {
  const map = new Map<string, Role>();
  for (const e of entries) {
    const eq = e.lastIndexOf('=');
    const value = e.slice(0, eq);
    const role = e.slice(eq + 1);
    if (eq <= 0 || !ROLES.includes(role as Role))
      return `--oidc-role-map: expected value=viewer|operator|admin, found ${JSON.stringify(cut(e, 100))}`;
    map.set(value, role as Role);
  }
  if (map.size === 0) return '--oidc-role-map: give at least one value=role';
  return map;
}

/** The role of a user from the claim's values (the highest mapped), or null. */
export function roleFromClaim(value: unknown, map: ReadonlyMap<string, Role>): Role | null {
  const values = Array.isArray(value)
    ? value
    : value === undefined || value === null
      ? []
      : [value];
  let best: Role | null = null;
  for (const v of values) {
    const role = typeof v === 'string' ? map.get(v) : undefined;
    if (role && (best === null || roleAtLeast(role, best))) best = role;
  }
  return best;
}

const ssoCookie = (value: string | null, secure: boolean): string =>
  `${SSO_COOKIE}=${value ?? ''}; Max-Age=${value === null ? 0 : LOGIN_TTL_MS / 1000}; Path=/api/v1/sso; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

/** A refused login: its reason for the log and the client's answer. */
class LoginRefused extends Error {
  constructor(
    readonly status: 400 | 401 | 403,
    message: string,
    /** For the log (never a value tried). */
    readonly reason: string,
  ) {
    super(message);
  }
}

/** Mounts the SSO routes; discovery happens at the first login (and again after a failure). */
export function mountSso(
  app: Hono,
  config: SsoConfig,
  deps: { access: Access; store: Store; scheduler: DaemonControl },
): void {
  const { access, store, scheduler } = deps;
  access.sso = { issuer: config.issuer };
  let discovered: Promise<oidc.Configuration> | null = null;
  const configuration = (): Promise<oidc.Configuration> => {
    const issuer = new URL(config.issuer);
    const insecure = issuer.protocol === 'http:' && LOOPBACK.test(issuer.hostname);
    discovered ??= oidc
      .discovery(
        issuer,
        config.clientId,
        undefined,
        config.clientSecret !== undefined
          ? oidc.ClientSecretBasic(config.clientSecret)
          : oidc.None(),
        {
          execute: [
            oidc.enableNonRepudiationChecks,
            ...(insecure ? [oidc.allowInsecureRequests] : []),
          ],
          timeout: 10,
        },
      )
      .catch((err: unknown) => {
        discovered = null;
        throw err;
      });
    return discovered;
  };
  const redirectUri = (c: Context): string =>
    `${(config.publicUrl ?? new URL(c.req.url).origin).replace(/\/$/, '')}${CALLBACK}`;

  app.get('/api/v1/sso/login', async (c) => {
    c.header('cache-control', 'no-store');
    let cfg: oidc.Configuration;
    try {
      cfg = await configuration();
    } catch (err) {
      access.warn(
        `sso: the provider ${config.issuer} could not be discovered: ${(err as Error).message}`,
      );
      return c.json(
        errorJson(
          'unavailable',
          `the identity provider ${cut(config.issuer, 200)} cannot be reached; try again, or log in with a token`,
        ),
        503,
      );
    }
    const login = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      expiresAt: scheduler.now() + LOGIN_TTL_MS,
    };
    await store.putLoginState(login);
    const url = oidc.buildAuthorizationUrl(cfg, {
      redirect_uri: redirectUri(c),
      scope: 'openid profile email',
      response_type: 'code',
      state: login.state,
      nonce: login.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(login.verifier),
      code_challenge_method: 'S256',
    });
    c.header('set-cookie', ssoCookie(login.state, isSecure(c)));
    return c.redirect(url.href, 302);
  });

  app.get(CALLBACK, async (c) => {
    c.header('cache-control', 'no-store');
    const locked = access.lockedOut(c);
    if (locked) return access.refuse(c, locked);
    try {
      const { user, role } = await finish(c);
      const session = access.sessions?.create({ kind: 'user', user, role });
      if (!session) throw new LoginRefused(401, 'this daemon runs with --no-auth', 'no sessions');
      access.succeeded(c);
      await auditPublic(
        c,
        { store, scheduler, warn: access.warn },
        {
          who: { who: user, whoKind: 'user', role, apps: [] },
          action: 'login.sso',
          status: 200,
        },
      );
      c.header('set-cookie', sessionCookie(session.cookie, isSecure(c)));
      c.header('set-cookie', ssoCookie(null, isSecure(c)), { append: true });
      return c.redirect('/', 302);
    } catch (err) {
      const refused =
        err instanceof LoginRefused
          ? err
          : new LoginRefused(
              401,
              `the identity provider’s answer was refused (${describe(err)})`,
              describe(err),
            );
      access.failed(c, `failed SSO login (${refused.reason})`);
      c.header('set-cookie', ssoCookie(null, isSecure(c)));
      return c.json(
        errorJson(
          refused.status === 403 ? 'forbidden' : 'unauthorized',
          `single sign-on refused: ${refused.message}`,
        ),
        refused.status,
      );
    }
  });

  async function finish(c: Context): Promise<{ user: string; role: Role }> {
    const query = new URL(c.req.url).searchParams;
    const state = query.get('state') ?? '';
    const bound = readCookie(c.req.header('cookie'), SSO_COOKIE);
    if (query.has('error'))
      throw new LoginRefused(
        401,
        `the provider answered ${cut(query.get('error') ?? '', 60)}`,
        'provider error',
      );
    if (state === '' || bound === undefined || bound !== state)
      throw new LoginRefused(
        401,
        'this login was not begun in this browser (the state does not match its cookie); start again',
        'state not bound to this browser',
      );
    const login = await store.takeLoginState(state, scheduler.now());
    if (login === null)
      throw new LoginRefused(
        401,
        'this login is unknown, expired or already used (a replayed state); start again',
        'unknown, expired or replayed state',
      );
    const cfg = await configuration();
    const current = new URL(`${redirectUri(c)}?${query.toString()}`);
    const tokens = await oidc.authorizationCodeGrant(cfg, current, {
      pkceCodeVerifier: login.verifier,
      expectedState: login.state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new LoginRefused(401, 'no ID token', 'no ID token');
    let value = claims[config.roleClaim];
    if (value === undefined) {
      const info = await oidc.fetchUserInfo(cfg, tokens.access_token, claims.sub).catch(() => null);
      value = info?.[config.roleClaim];
    }
    const user = String(claims['preferred_username'] ?? claims['email'] ?? claims.sub).slice(
      0,
      200,
    );
    const role = roleFromClaim(value, config.roleMap);
    if (role === null)
      throw new LoginRefused(
        403,
        `user ${JSON.stringify(user)} has no role here: no value of the claim ${JSON.stringify(config.roleClaim)} is in --oidc-role-map`,
        `no role for user ${JSON.stringify(user)}`,
      );
    return { user, role };
  }
}

/**
 * A verification failure in a few words: the innermost error's code and message (openid-client
 * wraps oauth4webapi's, which says which check failed: `unexpected JWT "aud" (audience) claim
 * value`, `JWT signature verification failed`…) and the claim concerned; never a token.
 */
function describe(err: unknown): string {
  let e = err as { message?: string; code?: string; cause?: unknown };
  while (e.cause instanceof Error) e = e.cause as typeof e;
  const cause = e.cause as { claim?: unknown } | undefined;
  const claim = typeof cause?.claim === 'string' ? ` (claim ${cause.claim})` : '';
  return cut(`${e.code ?? 'error'}: ${e.message ?? String(err)}${claim}`, 200);
}
