// The shape of one REST route: which root field answers it and how the answer is dressed.
// Domains declare their routes next to their resolvers (domains/*/routes.ts); rest/routes.ts joins them.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * bare: success is the field's value; errors are {code, message}.
 * envelope: success is {success: true, data: value}; errors are {success: false, error: {code, message}}.
 */
export type ResponseStyle = 'bare' | 'envelope';

export interface RestRoute {
  method: HttpMethod;
  /** Path below /backend, with :params named like the field's arguments. */
  path: string;
  /** Root field, e.g. 'Mutation.createLead'. */
  field: `${'Query' | 'Mutation'}.${string}`;
  style: ResponseStyle;
  /** Success status; 204 answers with no body. Default 200. */
  status?: 200 | 201 | 204;
  /**
   * How a success body is dressed in envelope style: 'data' wraps it as {success, data}; 'spread' merges
   * a {data, pagination} result into {success, data, pagination}; 'none' sends it as it is.
   * Default: 'data' for envelope routes, 'none' for bare ones.
   */
  wrap?: 'data' | 'spread' | 'none';
  /** Platform routes authenticated by ADMIN_TOKEN instead of an API key. */
  admin?: boolean;
  /** A sentence for the OpenAPI document. */
  description?: string;
}

export function route(r: RestRoute): RestRoute {
  return r;
}
