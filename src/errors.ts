// One error type for both transports. Services throw AppError; GraphQL carries its kind and status in
// extensions; the REST layer projects it into the route's bare or envelope shape (http/responses.ts).
import { GraphQLError } from 'graphql';
import { PothosValidationError } from '@pothos/core';
import { Prisma } from './generated/prisma/client.js';

export type ErrorKind =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'INVALID_INPUT'
  | 'CONFLICT'
  | 'ALREADY_EXISTS'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'INVALID_PHONE'
  | 'CHANNEL_ERROR'
  | 'WINDOW_CLOSED'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL';

/** The HTTP status of each kind, on every transport. */
export const ERROR_STATUS: Record<ErrorKind, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_INPUT: 400,
  CONFLICT: 409,
  ALREADY_EXISTS: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  INVALID_PHONE: 400,
  CHANNEL_ERROR: 502,
  WINDOW_CLOSED: 422,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra fields the response carries next to code and message (e.g. pipeline_count). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[kind];
  }

  toGraphQLError(): GraphQLError {
    return new GraphQLError(this.message, {
      originalError: this,
      extensions: { code: this.kind, status: this.status, ...this.extra },
    });
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} não encontrado(a)`);
export const invalidInput = (message: string, extra?: Record<string, unknown>) => new AppError('INVALID_INPUT', message, extra);
/** The answer to a request whose client went away: no one reads it, and it is no server fault to log. */
export const clientGone = () => invalidInput('O cliente interrompeu a requisição');
/**
 * An input error about one field: the message names it, and `details: [{field, message}]` carries it
 * for clients, `field` as a JSON path of the body or arguments (`products[2].qty`).
 */
export const invalidField = (field: string, problem: string) =>
  new AppError('INVALID_INPUT', `O campo ${field} ${problem}`, { details: [{ field, message: problem }] });
/** The same for a query-string or path parameter. */
export const invalidParameter = (name: string, problem: string) =>
  new AppError('INVALID_INPUT', `O parâmetro ${name} ${problem}`, { details: [{ field: name, message: problem }] });
export const conflict = (message: string, extra?: Record<string, unknown>) => new AppError('CONFLICT', message, extra);
/** A body or file over MAX_FILE_BYTES / MAX_BODY_BYTES (config.ts), refused wherever it is read. */
export const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'Arquivo ou corpo da requisição excede 10 MB');

/**
 * Which constraint the database refused, whatever reported it: Prisma's known errors (P2002, P2003),
 * a driver adapter's own kinds, or the raw SQLSTATEs pglite-prisma-adapter passes through (23505, 23503).
 */
export function constraintViolation(error: unknown): 'unique' | 'foreign_key' | null {
  if (error instanceof Prisma.PrismaClientKnownRequestError) {
    if (error.code === 'P2002') return 'unique';
    if (error.code === 'P2003') return 'foreign_key';
  }
  // node-postgres (the direct path, db/direct.ts): the SQLSTATE on the error itself.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === '23505') return 'unique';
  if (code === '23503') return 'foreign_key';
  type Cause = { kind?: string; code?: string };
  // A raw statement's refusal through Prisma (P2010) carries the driver's error in `meta`.
  const cause =
    (error as { meta?: { driverAdapterError?: { cause?: Cause } } } | undefined)?.meta?.driverAdapterError?.cause ??
    (error as { cause?: Cause } | undefined)?.cause;
  if (cause?.kind === 'UniqueConstraintViolation' || (cause?.kind === 'postgres' && cause.code === '23505')) return 'unique';
  if (cause?.kind === 'ForeignKeyConstraintViolation' || (cause?.kind === 'postgres' && cause.code === '23503')) return 'foreign_key';
  return null;
}

/**
 * A value the database cannot read as its column's type (a forged cursor carrying a non-UUID id, a
 * malformed timestamp): SQLSTATE 22P02/22007/22008 or Prisma's P2023, whatever reported it.
 */
function isMalformedValue(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2023') return true;
  const cause = (error as { cause?: { kind?: string; code?: string; originalCode?: string } } | undefined)?.cause;
  const code = cause?.code ?? cause?.originalCode;
  return ['22P02', '22007', '22008'].includes(code ?? '') || cause?.kind === 'InvalidInputValue';
}

/** Seconds a client is told to wait (`Retry-After`) when the database is saturated. */
export const RETRY_AFTER_SECONDS = 2;

/** PostgreSQL SQLSTATEs of a saturated server: statement timeout, lock timeout, too many connections, starting up. */
const SATURATED_SQLSTATES = ['57014', '55P03', '53300', '57P03'];
/** Prisma: pool timeout (P2024), transaction not started within maxWait or expired (P2028). */
const SATURATED_PRISMA = ['P2024', 'P2028'];

/**
 * A database too busy to serve now (pool exhausted, a transaction waiting past maxWait, a statement
 * cut by statement_timeout), whatever reported it: the client should retry later (503), not see a 500.
 */
export function isDatabaseSaturated(error: unknown): boolean {
  let current: unknown = error;
  for (let i = 0; i < 5 && current && typeof current === 'object'; i++) {
    const e = current as { code?: unknown; originalCode?: unknown; kind?: unknown; message?: unknown; cause?: unknown };
    if (error instanceof Prisma.PrismaClientKnownRequestError && SATURATED_PRISMA.includes(error.code)) return true;
    if (typeof e.code === 'string' && (SATURATED_SQLSTATES.includes(e.code) || SATURATED_PRISMA.includes(e.code))) return true;
    if (typeof e.originalCode === 'string' && SATURATED_SQLSTATES.includes(e.originalCode)) return true;
    // node-postgres' pool: no connection free within connectionTimeoutMillis.
    if (
      typeof e.message === 'string' &&
      /timeout exceeded when trying to connect|Unable to start a transaction in the given time|canceling statement due to statement timeout/i.test(
        e.message,
      )
    )
      return true;
    current = e.cause;
  }
  return false;
}

/** SQLSTATEs of a server that cannot be talked to: connection exceptions (class 08), shut down or crashed. */
const UNREACHABLE_SQLSTATES = /^(08...|57P01|57P02)$/;
/** Prisma: can't reach the server (P1001), timed out reaching it (P1002), server closed the connection (P1017). */
const UNREACHABLE_PRISMA = ['P1001', 'P1002', 'P1017'];
/** Driver adapters' kinds of a lost or refused connection. */
const UNREACHABLE_KINDS = ['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections'];
/** Node's socket errors on the way to the server. */
const UNREACHABLE_SOCKET = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'];

/**
 * A database that cannot be reached now (refused, restarting, the connection lost mid-statement),
 * whatever reported it: like a saturated one, a 503 the client retries, never a 500.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let i = 0; i < 6 && current && typeof current === 'object'; i++) {
    const e = current as { code?: unknown; originalCode?: unknown; kind?: unknown; message?: unknown; cause?: unknown; meta?: unknown };
    const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : '';
    if (UNREACHABLE_SQLSTATES.test(code) || UNREACHABLE_PRISMA.includes(code) || UNREACHABLE_SOCKET.includes(code)) return true;
    if (typeof e.kind === 'string' && UNREACHABLE_KINDS.includes(e.kind)) return true;
    if (
      typeof e.message === 'string' &&
      /Connection terminated|connection error|terminating connection due to administrator command|Can't reach database server/i.test(
        e.message,
      )
    )
      return true;
    const adapterCause = (e.meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError?.cause;
    current = adapterCause ?? e.cause;
  }
  return false;
}

/**
 * Translates what the database refuses into AppErrors, so a constraint is the last line of defence and
 * never a 500: unique → 409, foreign key → 409, missing row → 404.
 */
export function fromDatabaseError(error: unknown, what = 'Registro'): unknown {
  const violated = constraintViolation(error);
  if (violated === 'unique') return new AppError('ALREADY_EXISTS', `${what} já existe`);
  if (violated === 'foreign_key') return new AppError('CONFLICT', `${what} está em uso por outros registros`);
  if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return notFound(what);
  if (isMalformedValue(error)) return invalidInput('Valor em formato inválido');
  if (isDatabaseSaturated(error))
    return new AppError('SERVICE_UNAVAILABLE', `Serviço sobrecarregado: tente de novo em ${RETRY_AFTER_SECONDS} s`);
  if (isDatabaseUnreachable(error))
    return new AppError('SERVICE_UNAVAILABLE', `Serviço temporariamente indisponível: tente de novo em ${RETRY_AFTER_SECONDS} s`);
  return error;
}

/** Finds the AppError behind a GraphQL error, if any. */
function appErrorOf(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/**
 * The one place that decides what an error means to a client, for both transports: AppErrors as they
 * are, database refusals translated, GraphQL request errors (bad variables, invalid values) as invalid
 * input; anything else is internal and its details stay in the log.
 */
export function normalizeError(error: unknown): { error: AppError; internal?: unknown } {
  const normalized = normalizeAny(error);
  // graphql-js names the variable (and the path inside it) only in the outermost error of a refusal.
  if (normalized.error.kind === 'INVALID_INPUT' && !normalized.error.extra.details && error instanceof GraphQLError && !error.path) {
    const details = requestErrorDetails(error.message);
    if (details) return { error: new AppError('INVALID_INPUT', normalized.error.message, { ...normalized.error.extra, details }) };
  }
  return normalized;
}

function normalizeAny(error: unknown): { error: AppError; internal?: unknown } {
  const app = appErrorOf(error);
  if (app) return { error: app };
  const original = (error as { originalError?: unknown })?.originalError ?? error;
  // Pothos refuses a cursor it cannot decode: the client's input, not a server fault.
  if (original instanceof PothosValidationError)
    return { error: invalidInput(/cursor/i.test(original.message) ? 'Cursor inválido' : 'Entrada inválida') };
  const translated = fromDatabaseError(original);
  if (translated instanceof AppError) return { error: translated };
  if (error instanceof GraphQLError && !error.originalError && !error.path) {
    // Parse and validation errors, and variables the schema refused.
    return { error: requestInputError(error.message) };
  }
  if (error instanceof GraphQLError && error.originalError instanceof GraphQLError) return normalizeAny(error.originalError);
  if (error instanceof GraphQLError && (error.extensions?.http as { status?: number } | undefined)?.status === 400) {
    return { error: requestInputError(error.message) };
  }
  return { error: new AppError('INTERNAL', 'Erro interno do servidor'), internal: original };
}

const PREFIX = 'Entrada inválida: ';

/** A request graphql-js refused, as INVALID_INPUT, prefixed once. */
function requestInputError(message: string): AppError {
  return new AppError('INVALID_INPUT', message.startsWith(PREFIX) ? message : PREFIX + message);
}

/**
 * The field graphql-js names in a refusal, as `details`: a variable (REST body keys are the variables
 * of the route's field) or the path inside it (`products[2].qty`), or a missing argument.
 */
function requestErrorDetails(message: string): { field: string; message: string }[] | undefined {
  let m = /^Variable "\$[^"]+" got invalid value .*? at "([^"]+)"; (.*)$/s.exec(message);
  if (m) return [{ field: m[1], message: m[2] }];
  m = /^Variable "\$([^"]+)" got invalid value .*?; (.*)$/s.exec(message);
  if (m) return [{ field: m[1], message: m[2] }];
  m = /^Variable "\$([^"]+)" of (?:required|non-null) type "([^"]+)" (?:was not provided|must not be null)\.$/.exec(message);
  if (m) return [{ field: m[1], message: `é obrigatório (${m[2]})` }];
  m = /^Field "[^"]+" argument "([^"]+)" of type "([^"]+)" is required, but it was not provided\.$/.exec(message);
  if (m) return [{ field: m[1], message: `é obrigatório (${m[2]})` }];
  return undefined;
}
