/** Building blocks of the OpenAPI document (`openapi.ts`, `openapi-views.ts`). */
import { roleOf } from './route-roles.js';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
export const error = (description: string) => ({ description, ...json(ref('Error')) });
export const pathParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
export const time = { type: ['string', 'null'], format: 'date-time' };
export const query = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema: { type: 'string' },
});

type Operation = { responses?: Record<string, unknown> } & Record<string, unknown>;

/**
 * Every operation with its security (`access.ts`) and its role (`x-cronix-role`, from the one
 * route table of `route-roles.ts`, SPEC §18): the `/api/v1` routes need the bearer token or the
 * session cookie, may answer 401, 403 (the role needed, named) and 429; `/healthz`, `/metrics`
 * (unless `--metrics-auth`: then any role), `/openapi.json` and the `public` routes (session,
 * SSO, host reports) are open. A route with no row in the table is shown as `admin` — what it
 * needs at run time — and fails the role test.
 */
export function withSecurity(
  paths: Record<string, Record<string, Operation>>,
): Record<string, Record<string, Operation>> {
  const out: Record<string, Record<string, Operation>> = {};
  for (const [path, operations] of Object.entries(paths)) {
    const secured: Record<string, Operation> = {};
    for (const [method, op] of Object.entries(operations)) {
      const role = path.startsWith('/api/') ? (roleOf(method, path) ?? 'admin') : 'public';
      secured[method] =
        role === 'public'
          ? // a route that authenticates itself (host reports: a signature) keeps its own security
            { security: [], ...op, 'x-cronix-role': role }
          : {
              ...op,
              security: [{ bearer: [] }, { session: [] }],
              'x-cronix-role': role,
              responses: {
                401: error('no token or session, or a wrong, revoked or expired token'),
                403: error(
                  `the caller's role or apps do not allow this: it needs ${role}${role === 'operator' ? ' (for the app concerned, when the token is limited to apps)' : ''}`,
                ),
                429: error('too many wrong tokens from this address; see Retry-After'),
                ...op.responses,
              },
            };
    }
    out[path] = secured;
  }
  return out;
}
