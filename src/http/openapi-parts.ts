/** Building blocks of the OpenAPI document (`openapi.ts`, `openapi-views.ts`). */
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
