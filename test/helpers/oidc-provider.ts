/**
 * A real OpenID Connect provider for the SSO tests: `oidc-provider` (the certified Node.js
 * provider) on a loopback port, with its development login form (any login, any password), one
 * public client (PKCE required), users whose `groups` claim is chosen by the test, and a switch
 * that re-signs the ID token of the next token responses with chosen claims — with the
 * provider's own key (so only the claim is wrong: another audience, an expiry in the past) or
 * with another key (a forged signature).
 */
import type { Server } from 'node:http';
import { exportJWK, generateKeyPair, decodeJwt, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

/** How the next token responses' ID tokens are altered; null: as issued. */
export type Tamper = null | {
  claims?: (p: JWTPayload) => JWTPayload;
  /** Sign with a key the provider does not publish. */
  forge?: boolean;
};

export interface TestProvider {
  issuer: string;
  /** The `groups` of each user by login name (absent: `[]`). */
  groups: Map<string, string[]>;
  tamper: Tamper;
  close(): Promise<void>;
}

/** Starts the provider on `port` for a client whose redirect URI is `redirectUri`. */
export async function startProvider(
  port: number,
  clientId: string,
  redirectUri: string,
): Promise<TestProvider> {
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const forger = (await generateKeyPair('RS256')).privateKey;
  const groups = new Map<string, string[]>();
  const state: TestProvider = {
    issuer,
    groups,
    tamper: null,
    close: async () => undefined,
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({
        sub,
        preferred_username: sub,
        email: `${sub}@example.test`,
        groups: groups.get(sub) ?? [],
      }),
    }),
    // a first-party client: no consent screen
    loadExistingGrant: async (ctx: {
      oidc: {
        client: { clientId: string };
        session: { accountId: string };
        provider: {
          Grant: new (o: object) => { addOIDCScope(s: string): void; save(): Promise<string> };
        };
      };
    }) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid profile email');
      await grant.save();
      return grant;
    },
  } as never);
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path !== '/token' || !state.tamper || typeof body?.id_token !== 'string') return;
    const claims = state.tamper.claims ?? ((p: JWTPayload) => p);
    const payload = claims(decodeJwt(body.id_token));
    const idToken = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .sign(state.tamper.forge ? forger : privateKey);
    ctx.body = { ...body, id_token: idToken };
  });
  const server: Server = await new Promise((resolve) => {
    const s = provider.listen(port, '127.0.0.1', () => resolve(s));
  });
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
