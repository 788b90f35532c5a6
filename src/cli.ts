// `npm run cli -- <command>`: admin tasks while the server is stopped (PGlite is single-process), or
// against PostgreSQL at any time. Uses the same services as the API. backup and restore are for the
// embedded database and its files (PostgreSQL has pg_dump): they work on the directories, not a client.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateApiKey } from './auth/keys.js';
import { loadConfig, type Config } from './config.js';
import { backup, restore } from './db/backup.js';
import { openDatabase } from './db/client.js';
import { tenantClientsOf } from './db/tenant-scope.js';
import { createApiKey, createOrganisation, deleteApiKey, revokeApiKey } from './domains/accounts/service.js';
// The composition root: registers every domain (and so the permission catalogue the key checks use).
import './domains/index.js';
import { isUuid } from './domains/common/validate.js';
import type { Context } from './context/context.js';
import { setLogLevel } from './log.js';
import { createStorage } from './storage/create.js';
import { resealSecrets } from './reseal-secrets.js';
import { createApp } from './app.js';
import { seedDemo } from './seed-demo.js';
import { configureSecrets, generateSecretsKey } from './secrets.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  keygen                                                         print a new well-formed API key (for BOOTSTRAP_API_KEY)
  keygen --secrets                                               print a new key for SECRETS_KEY
  reseal-secrets                                                 seal every stored secret with SECRETS_KEY's first key (after a rotation)
  create-tenant --name NAME [--owner-name N] [--owner-email E]   organisation + Owner + API key
  list-tenants                                                   organisations
  create-key --tenant ID [--user ID] [--name N] [--permissions a,b] [--expires-at ISO]
  list-keys --tenant ID                                          keys (no secrets)
  revoke-key --id KEY_ID                                         next request with it gets 401
  delete-key --id KEY_ID
  seed-demo [--name NAME]                                        a sample organisation to explore (leads, a board, conversations)
  backup FILE                                                    the embedded database and stored files, in one .tar.gz
  restore FILE                                                   a backup into an empty DATA_DIR (and STORAGE_DIR)
`;

/** Where a command's output goes: standard output when run as the CLI. */
type Print = (text: string) => void;

/**
 * Runs one command (`argv` without node and the script) against the database `env` configures. A refusal
 * throws an Error whose message is what the CLI prints before exiting with 1. Exported for the CLI test,
 * which runs most commands in the test's own process (a CLI process takes seconds to start on a loaded
 * machine). Run this way it leaves the caller's log level as it is.
 */
export async function runCli(argv: string[], { env = process.env, print = console.log }: { env?: NodeJS.ProcessEnv; print?: Print } = {}) {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'owner-name': { type: 'string' },
      'owner-email': { type: 'string' },
      tenant: { type: 'string' },
      user: { type: 'string' },
      permissions: { type: 'string' },
      'expires-at': { type: 'string' },
      id: { type: 'string' },
      secrets: { type: 'boolean' },
    },
  });
  if (!command || command === 'help' || command === '--help') {
    print(USAGE);
    return;
  }
  if (command === 'keygen') {
    // No database: the key is only a value to put in BOOTSTRAP_API_KEY (stored as a hash at the first
    // start), or in SECRETS_KEY.
    print(values.secrets ? generateSecretsKey() : generateApiKey());
    return;
  }
  const config = loadConfig(env);
  if (command === 'backup' || command === 'restore') return backupOrRestore(command, positionals, config, print);
  if (positionals.length) throw new Error(`Unexpected argument "${positionals[0]}"\n\n${USAGE}`);
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    pgliteDir: path.join(config.dataDir, 'db'),
    migrate: config.migrateOnStart,
  });
  const { prisma } = db;
  const need = (name: Exclude<keyof typeof values, 'secrets'>) => {
    const v = values[name];
    if (!v) throw new Error(`--${name} is required for ${command}\n\n${USAGE}`);
    return v;
  };
  const needId = (name: 'tenant' | 'id') => {
    const v = need(name);
    if (!isUuid(v)) throw new Error(`--${name} must be an id (UUID)`);
    return v;
  };
  // The platform operator acting inside one organisation: the API's account services and their checks.
  const tenants = tenantClientsOf(prisma);
  const storage = createStorage(config);
  const operatorIn = (tenantId: string): Context => ({
    viewer: { kind: 'admin', tenantId },
    db: tenants.for(tenantId),
    prisma,
    config,
    storage,
    requestId: 'cli',
    perRequest: new Map(),
  });
  /** The organisation of a key, for the commands that name only the key. */
  const keyTenant = async (id: string) => {
    const key = await prisma.apiKey.findFirst({ where: { id }, select: { tenant_id: true } });
    if (!key) throw new Error('No such key');
    return key.tenant_id;
  };
  try {
    switch (command) {
      case 'create-tenant': {
        const r = await createOrganisation(prisma, {
          name: need('name'),
          owner_name: values['owner-name'],
          owner_email: values['owner-email'],
        });
        const { id, name, created_at } = r.tenant;
        const user = { id: r.user.id, name: r.user.name, email: r.user.email, role: r.user.role };
        print(JSON.stringify({ tenant: { id, name, created_at }, user, api_key: r.api_key }, null, 2));
        break;
      }
      case 'list-tenants':
        print(
          JSON.stringify(
            await prisma.tenant.findMany({ select: { id: true, name: true, created_at: true }, orderBy: { created_at: 'asc' } }),
            null,
            2,
          ),
        );
        break;
      case 'create-key': {
        const ctx = operatorIn(needId('tenant'));
        if (values.user && !isUuid(values.user)) throw new Error('--user must be an id (UUID)');
        const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
        if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new Error('--expires-at must be an ISO 8601 timestamp');
        // Without --user, the organisation's first Owner.
        const userId =
          values.user ??
          (await ctx.db.user.findFirst({ where: { role: 'owner' }, orderBy: { created_at: 'asc' }, select: { id: true } }))?.id;
        if (!userId) throw new Error('No such user in that organisation');
        const row = await createApiKey(ctx, {
          name: values.name ?? 'CLI key',
          user_id: userId,
          permissions: values.permissions ? values.permissions.split(',').map((p) => p.trim()) : [],
          expires_at: expiresAt,
        });
        print(JSON.stringify({ id: row.id, key: row.key, prefix: row.prefix, user_id: row.user_id }, null, 2));
        break;
      }
      case 'list-keys':
        print(JSON.stringify(await prisma.apiKey.findMany({ where: { tenant_id: need('tenant') }, omit: { key_hash: true } }), null, 2));
        break;
      case 'revoke-key': {
        const id = needId('id');
        await revokeApiKey(operatorIn(await keyTenant(id)), id);
        print('revoked');
        break;
      }
      case 'reseal-secrets': {
        configureSecrets(config);
        const r = await resealSecrets(prisma);
        print(`sealed with the current key: ${r.webhooks} webhook(s), ${r.channels} channel(s)`);
        break;
      }
      case 'seed-demo': {
        const org = await createOrganisation(prisma, { name: values.name ?? 'Demo' });
        const app = createApp(config, db);
        try {
          const demo = await seedDemo(app, { tenantId: org.tenant.id, key: org.api_key });
          print(
            JSON.stringify(
              {
                tenant: { id: org.tenant.id, name: org.tenant.name },
                api_key: org.api_key,
                try_in_graphiql: `{ pipelineBoard(id: "${demo.pipelineId}") { total_deals stages { deal_count total stage { name deals(first: 20) { nodes { number total lead { name company } } } } } } }`,
              },
              null,
              2,
            ),
          );
        } finally {
          app.close();
        }
        break;
      }
      case 'delete-key': {
        const id = needId('id');
        await deleteApiKey(operatorIn(await keyTenant(id)), id);
        print('deleted');
        break;
      }
      default:
        throw new Error(`Unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await db.close();
  }
}

async function backupOrRestore(command: 'backup' | 'restore', positionals: string[], config: Config, print: Print) {
  const [file, ...extra] = positionals;
  if (!file || extra.length) throw new Error(`${command} takes one FILE\n\n${USAGE}`);
  if (config.databaseUrl) {
    throw new Error(
      `DATABASE_URL is set: ${command} is for the embedded database. With PostgreSQL use pg_dump / pg_restore, ` +
        `and copy STORAGE_DIR (${config.storageDir}) with the files (README: "Backups").`,
    );
  }
  if (config.storage.kind === 's3') {
    throw new Error(
      `STORAGE=s3: ${command} copies the embedded database together with STORAGE_DIR, and the files are in the bucket ` +
        `${config.storage.bucket}. Stop the server, copy DATA_DIR/db, and copy the bucket with an S3 tool (README: "Backups").`,
    );
  }
  const where = { dataDir: config.dataDir, dbDir: path.join(config.dataDir, 'db'), storageDir: config.storageDir };
  if (command === 'backup') {
    const m = await backup(where, file);
    print(`Backed up the embedded database (${m.migrations.length} migrations applied) and ${m.files} stored file(s) to ${file}`);
  } else {
    const m = await restore(where, file);
    print(
      `Restored the backup of ${m.created_at} (${m.migrations.length} migrations applied, ${m.files} stored file(s)) into ${config.dataDir}` +
        (config.storageDir.startsWith(config.dataDir + path.sep) ? '' : ` and ${config.storageDir}`) +
        '. `npm run migrate` (or `npm start`) applies the migrations this version adds.',
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  setLogLevel('warn');
  runCli(process.argv.slice(2)).catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
