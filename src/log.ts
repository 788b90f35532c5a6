// Structured JSON logs through pino, one line per event: `{"level":"info","time":…,"requestId":…,"msg":…,
// …fields}`. A line written while a request is handled carries its id (and the trace id when tracing is
// on); secrets in fields are replaced by "[redacted]". info and below go to stdout, warn and error to stderr.
import pino from 'pino';
import { currentRequestId } from './observability/request-context.js';
import { activeTraceId } from './observability/tracing.js';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** Fields that may hold a credential, at the top level or one level down (`headers.authorization`). */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api_key',
  'apiKey',
  'secret',
  'secrets',
  'previous_secret',
  'token',
  'password',
];
const REDACTED = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), ...SECRET_FIELDS.map((f) => `*.headers.${f}`)].map((p) =>
  p.includes('-') ? p.replace(/(^|\.)([^.]*-[^.]*)$/, '$1["$2"]') : p,
);

const initial = (process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info')) as Level | 'silent';

const root = pino(
  {
    level: ['debug', 'info', 'warn', 'error', 'silent'].includes(initial) ? initial : 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED, censor: '[redacted]' },
    mixin() {
      const requestId = currentRequestId();
      if (!requestId) return {};
      const traceId = activeTraceId();
      return traceId ? { requestId, traceId } : { requestId };
    },
  },
  // process.stdout/stderr themselves (synchronous for files and pipes), so nothing is lost on exit.
  pino.multistream(
    [
      { level: 'debug', stream: process.stdout },
      { level: 'warn', stream: process.stderr },
    ],
    { dedupe: true },
  ),
);

export function setLogLevel(level: Level | 'silent') {
  root.level = level;
}

// The message goes first in the object so that it comes before the fields on the line.
const write = (level: Level) => (msg: string, fields?: Record<string, unknown>) => root[level]({ msg, ...fields });

export const log = {
  debug: write('debug'),
  info: write('info'),
  warn: write('warn'),
  error: write('error'),
};

/** What a log line says of a thrown value: its stack when it has one, else the value as text. */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.stack ?? e.message;
  return typeof e === 'string' ? e : (JSON.stringify(e) ?? String(e));
}
