// What a GraphQL client sees of an error: the AppError kind and status in extensions, as errors.ts
// decides them, for every phase (parse, validation, variables, cost, resolvers). A request error (one
// without a path: nothing ran) also sets the HTTP status, where Yoga would answer 200. In production,
// "Did you mean …" suggestions (fields, enum values) are hidden: they let a stranger map the schema.
import { GraphQLError, type DocumentNode, type GraphQLErrorOptions } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError, normalizeError } from '../errors.js';
import { log, errorText } from '../log.js';
import { literalDetails } from './graphql-literal-paths.js';
import { documentOf } from './execution-args.js';

export interface ErrorShapeOptions {
  production: boolean;
}

/** Errors already in the client's shape: validation results are cached and shaped again on reuse. */
const shaped = new WeakSet<GraphQLError>();

export function clientError(error: unknown, { production }: ErrorShapeOptions, document?: DocumentNode): GraphQLError {
  if (error instanceof GraphQLError && shaped.has(error)) return error;
  const { error: app, internal } = withLiteralDetails(normalizeError(error), error, document);
  if (internal) log.error('unhandled error', { error: errorText(internal) });
  const original = error as GraphQLError;
  const at = { nodes: original.nodes, source: original.source, positions: original.positions };
  const message = production ? withoutSuggestions(app.message) : app.message;
  const shown = production ? withoutDetailSuggestions(app) : app;
  if (!original.path) return requestError(shown, at, message);
  return new GraphQLError(message, { ...at, path: original.path, extensions: { code: app.kind, status: app.status, ...shown.extra } });
}

/** A refused argument literal (validation names no variable): `details` from where it sits in the document. */
function withLiteralDetails(normalized: ReturnType<typeof normalizeError>, error: unknown, document?: DocumentNode) {
  const { error: app } = normalized;
  if (!document || app.kind !== 'INVALID_INPUT' || app.extra.details || !(error instanceof GraphQLError)) return normalized;
  const details = literalDetails(error, document);
  return details ? { error: new AppError(app.kind, app.message, { ...app.extra, details }) } : normalized;
}

/** An error refusing the whole request: `{code, status}` in extensions and as the HTTP status. */
export function requestError(
  app: AppError,
  at: Pick<GraphQLErrorOptions, 'nodes' | 'source' | 'positions'> = {},
  message = app.message,
): GraphQLError {
  const error = new GraphQLError(message, {
    ...at,
    // `spec: false`: the status holds whatever the Accept header (Yoga sends 200 for application/json).
    extensions: { code: app.kind, status: app.status, ...app.extra, http: { status: app.status, spec: false } },
  });
  shaped.add(error);
  return error;
}

function withoutSuggestions(message: string): string {
  return message.replace(/\s*Did you mean [^?]*\?/g, '');
}

/** The same for the messages of `details` (graphql-js's own, for variables). */
function withoutDetailSuggestions(app: AppError): AppError {
  const details = app.extra.details as { field: string; message: string }[] | undefined;
  if (!details) return app;
  return new AppError(app.kind, app.message, {
    ...app.extra,
    details: details.map((d) => ({ ...d, message: withoutSuggestions(d.message) })),
  });
}

/** Validation errors skip Yoga's error masking; this gives them the same shape. */
export function shapeValidationErrors(options: ErrorShapeOptions): Plugin {
  return {
    onValidate:
      ({ params }) =>
      ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((e) => clientError(e, options, documentOf(params))));
      },
  };
}
