// OpenTelemetry: nothing of it is loaded unless OTEL_EXPORTER_OTLP_ENDPOINT is set; when it is, the real
// server process (as `npm start` runs it) exports over OTLP/HTTP a trace per request with its HTTP span,
// the GraphQL execution and that execution's SQL statements, and the request's log line has the trace id.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { migratedDataDir } from '../helpers/database.js';
import { POSTGRES_URL, testDatabaseKind } from '../helpers/env.js';
import { spawnServer } from '../helpers/server-process.js';
import { generateApiKey } from '../../src/auth/keys.js';

const run = promisify(execFile);
const KEY = generateApiKey();

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  scope: string;
}

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};

/** An OTLP/HTTP receiver on loopback: the JSON protocol's spans, flattened. */
async function otlpReceiver() {
  const spans: Span[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      paths.push(`${req.url} ${req.headers['content-type']}`);
      if (req.url === '/v1/traces') {
        for (const rs of JSON.parse(body).resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ ...s, scope: ss.scope?.name });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise((r) => server.close(r)),
  };
}

const schemas: string[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  if (!schemas.length) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await client.end();
});

function databaseEnv(): Record<string, string> {
  if (testDatabaseKind() === 'postgres') {
    const schema = `funil_test_otel_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    return { DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` };
  }
  const dir = migratedDataDir('funil-otel-');
  dirs.push(dir);
  return { DATA_DIR: dir };
}

describe('OpenTelemetry', () => {
  it('loads no @opentelemetry module when OTEL_EXPORTER_OTLP_ENDPOINT is unset (prom-client, with METRICS_TOKEN, only the API)', async () => {
    const probe = async (env: Record<string, string>) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/module-probe.ts'], {
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', METRICS_TOKEN: '', ...env },
      });
      return new Set((JSON.parse(stdout) as string[]).map((p) => /@opentelemetry\/[^/]+/.exec(p)![0]));
    };
    const [none, metricsOnly, loaded] = await Promise.all([
      probe({}),
      probe({ METRICS_TOKEN: 'metrics-token-0123456789' }),
      // The probe sees them when they are loaded.
      probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }),
    ]);
    expect(none).toEqual(new Set());
    expect(metricsOnly).toEqual(new Set(['@opentelemetry/api']));
    expect(loaded).toContain('@opentelemetry/sdk-node');
    expect(loaded).toContain('@opentelemetry/instrumentation-pg');
  });

  it('one REST request: a trace with the HTTP span, the GraphQL execution and its SQL statements; the log line has its trace id; /graphql too', async () => {
    const receiver = await otlpReceiver();
    try {
      const server = await spawnServer({
        ...databaseEnv(),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        BOOTSTRAP_API_KEY: KEY,
        LOG_LEVEL: 'info',
        WORKERS: 'false',
      });
      await server.listening;
      const response = await fetch(`http://127.0.0.1:${server.port}/backend/leads?limit=5`, {
        headers: { authorization: `Bearer ${KEY}`, 'x-request-id': 'trace-1' },
      });
      expect(response.status).toBe(200);

      const httpSpan = await vi.waitFor(
        () => {
          const found = receiver.spans.find((s) => s.kind === 2 && attribute(s, 'url.path') === '/backend/leads');
          expect(found).toBeDefined();
          return found!;
        },
        { timeout: 15_000, interval: 100 },
      );
      const trace = () => receiver.spans.filter((s) => s.traceId === httpSpan.traceId);
      const execution = await vi.waitFor(() => {
        const found = trace().find((s) => s.name === 'graphql.execute');
        expect(found).toBeDefined();
        return found!;
      });
      expect(attribute(execution, 'graphql.operation.type')).toBe('query');
      expect(attribute(execution, 'funil.transport')).toBe('rest');
      // The execution hangs under the HTTP span, and its statements under it.
      const ancestors = (s: Span) => {
        const byId = new Map(trace().map((t) => [t.spanId, t]));
        const chain: Span[] = [];
        for (let p = byId.get(s.parentSpanId ?? ''); p; p = byId.get(p.parentSpanId ?? '')) chain.push(p);
        return chain;
      };
      expect(ancestors(execution)).toContain(httpSpan);
      await vi.waitFor(() => {
        // PostgreSQL: the pg instrumentation's spans; the embedded database: one span per Prisma statement.
        const statements = trace().filter((s) =>
          testDatabaseKind() === 'postgres'
            ? s.scope === '@opentelemetry/instrumentation-pg' && s.name.startsWith('pg.query')
            : s.name === 'sql',
        );
        const underExecution = statements.filter((s) => ancestors(s).includes(execution));
        expect(underExecution.length).toBeGreaterThan(0);
        expect(String(attribute(underExecution[0], 'db.query.text'))).toMatch(/SELECT/i);
      });
      // On /graphql, the execution span carries the operation's name, its statements under it.
      const gql = await fetch(`http://127.0.0.1:${server.port}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query TraceTags { tags { id } }' }),
      });
      expect(gql.status).toBe(200);
      await vi.waitFor(
        () => {
          const named = receiver.spans.find((s) => s.name === 'graphql.execute' && attribute(s, 'graphql.operation.name') === 'TraceTags');
          expect(named).toBeDefined();
          expect(attribute(named!, 'funil.transport')).toBe('graphql');
          const inTrace = receiver.spans.filter((s) => s.traceId === named!.traceId);
          expect(inTrace.some((s) => s.kind === 2 && attribute(s, 'url.path') === '/graphql')).toBe(true);
          expect(inTrace.some((s) => s.parentSpanId === named!.spanId)).toBe(true);
        },
        { timeout: 15_000, interval: 100 },
      );
      // The request's log line carries the request id and the trace id.
      const line = server
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => JSON.parse(l))
        .find((l) => l.requestId === 'trace-1');
      expect(line).toMatchObject({ requestId: 'trace-1', traceId: httpSpan.traceId, route: '/backend/leads' });
      expect(receiver.paths.every((p) => p.startsWith('/v1/traces application/json'))).toBe(true);
      server.proc.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('stops with exit code 0 within its timeout when the collector is gone', { timeout: 60_000 }, async () => {
    const gone = await otlpReceiver();
    await gone.close();
    const server = await spawnServer({ ...databaseEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: gone.url, BOOTSTRAP_API_KEY: KEY, WORKERS: 'false' });
    await server.listening;
    for (let i = 0; i < 3; i++)
      expect((await fetch(`http://127.0.0.1:${server.port}/backend/tags`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(
        200,
      );
    server.proc.kill('SIGTERM');
    // 0: within SHUTDOWN_TIMEOUT_MS (past it the exit code is 1), the collector given 2 s at most.
    expect(await server.exited).toBe(0);
    expect(server.output()).not.toMatch(/ECONNREFUSED.*\n.*at |Unhandled/);
  });
});
