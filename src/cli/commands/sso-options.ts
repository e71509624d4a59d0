/**
 * `serve --oidc-issuer URL --oidc-client-id ID [--oidc-client-secret-ref REF]
 * --oidc-role-claim CLAIM --oidc-role-map value=role…` (SPEC §18): checked and turned into the
 * daemon's SSO configuration, or a usage error naming the flag and the value. The client secret
 * is read from its ref (`env:NAME`, `file:PATH`, as the jobs' secret refs) and never printed.
 */
import type { SsoConfig } from '../../http/sso.js';
import { parseRoleMap } from '../../http/sso.js';
import { resolveSecretRefs } from '../../secrets/resolve.js';

/** The flags as commander hands them over. */
export interface SsoFlags {
  oidcIssuer?: string;
  oidcClientId?: string;
  oidcClientSecretRef?: string;
  oidcRoleClaim?: string;
  oidcRoleMap?: string[];
}

/** The SSO configuration (absent without `--oidc-issuer`), or a usage error. */
export function ssoOptions(
  o: SsoFlags,
  env: NodeJS.ProcessEnv = process.env,
): { sso?: SsoConfig } | { error: string } {
  const given =
    o.oidcClientId !== undefined ||
    o.oidcClientSecretRef !== undefined ||
    o.oidcRoleClaim !== undefined ||
    (o.oidcRoleMap ?? []).length > 0;
  if (o.oidcIssuer === undefined)
    return given ? { error: 'the --oidc-* flags need --oidc-issuer URL' } : {};
  let issuer: URL;
  try {
    issuer = new URL(o.oidcIssuer);
    if (issuer.protocol !== 'https:' && issuer.protocol !== 'http:') throw new Error('scheme');
  } catch {
    return {
      error: `--oidc-issuer: expected the provider's https:// URL, found ${JSON.stringify(o.oidcIssuer.slice(0, 200))}`,
    };
  }
  const loopback = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i.test(issuer.hostname);
  if (issuer.protocol === 'http:' && !loopback)
    return {
      error: `--oidc-issuer: an identity provider is reached over https://, not ${issuer.origin}`,
    };
  if (!o.oidcClientId) return { error: '--oidc-issuer needs --oidc-client-id ID' };
  if (!o.oidcRoleClaim)
    return {
      error:
        '--oidc-issuer needs --oidc-role-claim CLAIM (the ID token claim naming groups or roles)',
    };
  const map = parseRoleMap(o.oidcRoleMap ?? []);
  if (typeof map === 'string') return { error: map };
  let clientSecret: string | undefined;
  if (o.oidcClientSecretRef !== undefined) {
    const r = resolveSecretRefs([o.oidcClientSecretRef], { env });
    const bad = r.unresolved[0];
    if (bad) return { error: `--oidc-client-secret-ref ${bad.ref}: ${bad.reason}` };
    clientSecret = r.secrets[0];
  }
  return {
    sso: {
      issuer: o.oidcIssuer, // as given: it must equal the provider's `issuer` exactly
      clientId: o.oidcClientId,
      ...(clientSecret !== undefined ? { clientSecret } : {}),
      roleClaim: o.oidcRoleClaim,
      roleMap: map,
    },
  };
}
