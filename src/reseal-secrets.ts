// Seals every stored secret with the current key (src/secrets.ts): webhook signing secrets and the
// credentials in channels' provider configs. The start runs it (values written before sealing, or
// sealed with a key SECRETS_KEY has since put second), and so does `npm run cli -- reseal-secrets`
// after a key rotation. Only rows holding a value not sealed with the current key are read, in pages
// by key. Here, above the domains, so that neither domain knows the other.
import { Prisma, type PrismaClient } from './generated/prisma/client.js';
import { resealedConfig } from './domains/messaging/channels.js';
import { log } from './log.js';
import { secrets } from './secrets.js';
import { tenantIs } from './tenant-sql.js';

const PAGE = 500;

interface Row {
  tenant_id: string;
  id: string;
}

/** Pages through a table by (tenant_id, id), handing each page to `each`. */
async function forEachPage<T extends Row>(read: (after: Row | null) => Promise<T[]>, each: (rows: T[]) => Promise<void>) {
  let after: Row | null = null;
  for (;;) {
    const rows = await read(after);
    if (!rows.length) return;
    await each(rows);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1];
  }
}

export async function resealSecrets(prisma: PrismaClient): Promise<{ webhooks: number; channels: number }> {
  const box = secrets();
  let webhooks = 0;
  let channels = 0;
  // Only rows with a value not sealed with the current key are read: a start with nothing to do reads none.
  const prefix = box.currentPrefix;
  const unopened: string[] = [];
  await forEachPage(
    (after) => prisma.$queryRaw<(Row & { secret: string; previous_secret: string | null })[]>`
      SELECT tenant_id, id, secret, previous_secret FROM webhooks
      WHERE ${after ? Prisma.sql`(tenant_id, id) > (${after.tenant_id}::uuid, ${after.id}::uuid)` : Prisma.sql`true`}
        AND (NOT starts_with(secret, ${prefix}) OR NOT starts_with(COALESCE(previous_secret, ${prefix}), ${prefix}))
      ORDER BY tenant_id, id LIMIT ${PAGE}`,
    async (rows) => {
      for (const row of rows) {
        const sealed = attempt(() => [box.reseal(row.secret), row.previous_secret === null ? null : box.reseal(row.previous_secret)]);
        if (!sealed) {
          unopened.push(`webhook ${row.id}`);
          continue;
        }
        await prisma.$executeRaw`UPDATE webhooks SET secret = ${sealed[0]}, previous_secret = ${sealed[1]}
          WHERE ${tenantIs(row.tenant_id)} AND id = ${row.id}::uuid AND secret = ${row.secret}`;
        webhooks++;
      }
    },
  );
  await forEachPage(
    (after) => prisma.$queryRaw<(Row & { config: unknown })[]>`
      SELECT tenant_id, id, config FROM channels
      WHERE ${after ? Prisma.sql`(tenant_id, id) > (${after.tenant_id}::uuid, ${after.id}::uuid)` : Prisma.sql`true`}
        AND (NOT starts_with(COALESCE(config->>'access_token', ${prefix}), ${prefix})
          OR NOT starts_with(COALESCE(config->>'app_secret', ${prefix}), ${prefix})
          OR NOT starts_with(COALESCE(config->>'verify_token', ${prefix}), ${prefix}))
      ORDER BY tenant_id, id LIMIT ${PAGE}`,
    async (rows) => {
      for (const row of rows) {
        const resealed = attempt(() => resealedConfig(row.config));
        if (resealed === undefined) unopened.push(`channel ${row.id}`);
        if (!resealed) continue;
        await prisma.$executeRaw`UPDATE channels SET config = ${JSON.stringify(resealed)}::jsonb
          WHERE ${tenantIs(row.tenant_id)} AND id = ${row.id}::uuid AND config = ${JSON.stringify(row.config)}::jsonb`;
        channels++;
      }
    },
  );
  // Sealed with a key SECRETS_KEY no longer lists (a restore without its key, say): left as they are.
  if (unopened.length)
    log.warn('secrets sealed with a key SECRETS_KEY does not hold', { rows: unopened.slice(0, 20), count: unopened.length });
  return { webhooks, channels };
}

/** What `fn` returns, or undefined when it throws (a value sealed with a key the box does not hold). */
function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
