// What a domain declares to join the service: its schema registration (importing its types and fields
// modules registers them on the builder), its routes, the permissions it defines, its background
// queues, the event types it emits, the tables that keep its stored files and what it does when the
// process starts. The central lists (route table, response style per area, permission catalogue, the
// workers' queues, the event types, the stored-file columns, the start hooks) are derived from
// `domains/index.ts`.
import type { Context } from '../context/context.js';
import type { Access, RootField } from '../auth/access.js';
import type { RoleName } from '../auth/permissions.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { RowPolicy } from '../db/row-policy.js';
import type { EventTypeSpec } from '../events/types.js';
import type { EventReaction } from '../events/emit.js';
import type { SuccessShape } from '../http/responses.js';
import type { QueueFactory } from '../jobs/queue.js';
import type { StoredFileColumns } from '../storage/stored-file-columns.js';
import type { FileStorage } from '../storage/storage.js';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';

/** A JSON Schema in the OpenAPI 3.1 dialect; `#/components/schemas/<GraphQL type>` refers to schema types. */
export type JsonSchema = Record<string, unknown>;

/**
 * What the API reference (rest/openapi/) cannot derive from the schema: mostly for handler routes, whose
 * request and answer are not a GraphQL field. Field routes are documented from their field alone.
 */
export interface RouteDocs {
  /** Default: the field name; for a handler, derived from the method and path. */
  operationId?: string;
  /**
   * A handler that is the REST form of a root field (the upload streamed by a handler, `Mutation.uploadFile`
   * on GraphQL): documented with that field's arguments as its body and its type as its answer.
   */
  like?: `${'Query' | 'Mutation'}.${string}`;
  description?: string;
  /** OpenAPI parameter objects beyond the path parameters (a handler's query or header parameters). */
  parameters?: readonly Record<string, unknown>[];
  /** A handler's request body, by media type. */
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  /** The value a handler returns, dressed like a field route's answer (style, wrap, status); an inline object for `spread`. */
  result?: JsonSchema;
  /** Success answers a handler writes itself as a Response, by status (instead of a dressed `result`). */
  responses?: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: JsonSchema }> }>;
  /** Error statuses beyond those derived from the route (e.g. 502 when a provider fails). */
  errors?: readonly number[];
}

/** A route's style, status and wrap (http/responses.ts) say how its answers are dressed. */
interface RouteBase extends SuccessShape {
  method: HttpMethod;
  /** Path below /backend, with :params; or, with `absolute`, a full path (the media proxy). */
  path: string;
  absolute?: boolean;
  access: Access;
  /** Query parameters a write documents (a GET reads all its arguments from the query string). */
  query?: readonly string[];
  /** One line for the API reference. */
  summary?: string;
  /** Extra facts for the API reference (request and answer of a handler route). */
  openapi?: RouteDocs;
}

/** A route answered by a root field of the schema (the operation sofa derives for it): the same resolver as GraphQL. */
export interface FieldRoute extends RouteBase {
  /** Root field, e.g. 'Mutation.createLead'. */
  field: `${'Query' | 'Mutation'}.${string}`;
  /**
   * Runs before a multipart body of an organisation's request is read: resolves with a release (called
   * once the request is answered) when the request may go on, rejects (an AppError) to refuse it. Lets a
   * route bound how many of one organisation's file uploads are read and handled at once.
   */
  admission?: (request: { tenantId: string; config: Context['config']; signal: AbortSignal }) => Promise<() => void>;
  handler?: never;
}

export interface HandlerInput {
  request: Request;
  url: URL;
  /** Path parameters by name. */
  params: Record<string, string>;
  /** The caller's context (viewer, scoped database); for `public` routes the viewer is null. */
  ctx: Context;
}

/**
 * A route that is not a GraphQL field: streaming, raw bodies, files served from storage. It gets the
 * same authentication, error shapes and body limits; it calls the same services. It returns a
 * Response, or a value that is dressed like a field route's answer.
 */
export interface HandlerRoute extends RouteBase {
  handler: (input: HandlerInput) => Promise<unknown>; // a Response, or a value the route wraps
  field?: never;
}

export type RouteSpec = FieldRoute | HandlerRoute;

/** A permission a domain defines, and the roles that hold it. */
export interface PermissionSpec {
  name: string;
  roles: readonly RoleName[];
  description: string;
}

export interface DomainManifest {
  name: string;
  /** One or two sentences for the API reference (the tag of the domain's routes). */
  description?: string;
  routes: readonly RouteSpec[];
  /** The access of root fields no route serves (graph-only fields, subscriptions); a route's field takes the route's. */
  fields?: Readonly<Record<RootField, Access>>;
  permissions?: readonly PermissionSpec[];
  /** The domain's background queues (jobs/queue.ts), run by every process with WORKERS on (src/workers.ts). */
  queues?: readonly QueueFactory[];
  /** The event types the domain emits (events/types.ts), in the order webhooks list them. */
  events?: readonly EventTypeSpec[];
  /** What the domain does, in the same statement, when events of other domains are written (events/emit.ts). */
  reactions?: readonly EventReaction[];
  /** The columns that keep the keys of its files in storage (storage/stored-file-columns.ts). */
  storedFiles?: readonly StoredFileColumns[];
  /** Which rows of its models a caller may see, applied by the request's scoped client (db/row-policy.ts). */
  rowPolicies?: readonly RowPolicy[];
  /** Run by `npm start` before it serves (src/start-hooks.ts), in the order of the domains list; long work goes in the background. */
  onStart?: (deps: StartDeps) => void | Promise<void>;
}

/** What a start hook is handed: the process's database, configuration and file storage. */
export interface StartDeps {
  db: Database;
  config: Config;
  storage: FileStorage;
}

export function defineDomain<M extends DomainManifest>(manifest: M): M {
  return manifest;
}
