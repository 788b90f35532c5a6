// Messaging channels (decisions.md "Messaging and channels"): managed with channels.manage, read with
// messages.view or messages.send. `config` holds the provider's credentials; it is validated here, stored
// with its token and secrets sealed (src/secrets.ts), and never returned: the GraphQL type has no field for it, so no answer or event can carry it.
import type { Context } from '../../context/context.js';
import type { TenantTx } from '../../db/tenant-scope.js';
import { invalidInput, notFound, invalidField } from '../../errors.js';
import type { Channel, ChannelProvider } from '../../generated/prisma/client.js';
import type { Selection } from '../common/types.js';
import { requiredText } from '../common/validate.js';
import { validateWebhookUrl } from '../webhooks/url-guard.js';
import { secrets } from '../../secrets.js';

/** The Graph API's base URL, used when a whatsapp_cloud channel does not set `api_url`. */
export const GRAPH_API_URL = 'https://graph.facebook.com/v21.0';

export interface WhatsAppCloudConfig {
  api_url: string;
  phone_number_id: string;
  access_token: string;
  app_secret?: string;
  verify_token?: string;
}

export interface ChannelConfigInput {
  api_url?: string | null;
  phone_number_id?: string | null;
  access_token?: string | null;
  app_secret?: string | null;
  verify_token?: string | null;
}

export interface ChannelInput {
  name?: string | null;
  provider?: ChannelProvider | null;
  department_id?: string | null;
  active?: boolean | null;
  config?: ChannelConfigInput | null;
}

function setting(config: ChannelConfigInput, key: keyof ChannelConfigInput, required: boolean, max: number): string | undefined {
  const value = config[key]?.trim();
  if (!value) {
    if (required) throw invalidField(`config.${key}`, 'é obrigatório para o provedor whatsapp_cloud');
    return undefined;
  }
  if (value.length > max) throw invalidField(`config.${key}`, `aceita no máximo ${max} caracteres`);
  return value;
}

/** A provider endpoint is called with the channel's token: it follows the webhook URL rules (https, public hosts). */
async function apiUrl(value: string | undefined, allowPrivate: boolean): Promise<string> {
  if (!value) return GRAPH_API_URL;
  return (await validateWebhookUrl(value, { allowPrivate, field: 'config.api_url' })).replace(/\/+$/, '');
}

/** The stored config of a provider, from what the client sent; refuses what the provider cannot use. */
export async function channelConfig(
  ctx: Context,
  provider: ChannelProvider,
  input: ChannelConfigInput | null | undefined,
): Promise<Record<string, string>> {
  const config = input ?? {};
  if (provider === 'test') {
    if (Object.values(config).some((v) => v != null)) throw invalidInput('O provedor test não aceita configuração');
    return {};
  }
  const stored: WhatsAppCloudConfig = {
    api_url: await apiUrl(setting(config, 'api_url', false, 2000), ctx.config.webhookAllowPrivateUrls),
    phone_number_id: setting(config, 'phone_number_id', true, 64)!,
    access_token: setting(config, 'access_token', true, 4096)!,
  };
  const appSecret = setting(config, 'app_secret', false, 512);
  const verifyToken = setting(config, 'verify_token', false, 512);
  if (appSecret) stored.app_secret = appSecret;
  if (verifyToken) stored.verify_token = verifyToken;
  return sealedConfig(stored, (value) => secrets().seal(value));
}

/** The config's credentials (token, app secret, verify token) passed through `change`; the rest as it is. */
function sealedConfig(config: WhatsAppCloudConfig, change: (value: string) => string): Record<string, string> {
  const out: Record<string, string> = { ...config };
  for (const key of SEALED_SETTINGS) if (out[key] !== undefined) out[key] = change(out[key]);
  return out;
}

/** The settings kept sealed at rest (src/secrets.ts). */
const SEALED_SETTINGS = ['access_token', 'app_secret', 'verify_token'] as const;

/** A channel's provider config with its credentials opened, for the call that needs them. */
export function whatsAppConfig(channel: Pick<Channel, 'config'>): WhatsAppCloudConfig {
  const box = secrets();
  return sealedConfig(channel.config as unknown as WhatsAppCloudConfig, (value) => box.open(value)) as unknown as WhatsAppCloudConfig;
}

/** A stored config with every credential sealed with the current key (`cli reseal-secrets`, the start), or null if it already is. */
export function resealedConfig(config: unknown): Record<string, string> | null {
  if (!config || typeof config !== 'object' || !('access_token' in config)) return null;
  const box = secrets();
  const stored = config as WhatsAppCloudConfig;
  if (SEALED_SETTINGS.every((key) => stored[key] === undefined || box.isCurrent(stored[key]))) return null;
  return sealedConfig(stored, (value) => box.reseal(value));
}

async function departmentRef(
  db: Pick<TenantTx, 'department'>,
  departmentId: string | null | undefined,
): Promise<string | null | undefined> {
  if (departmentId === undefined) return undefined;
  if (departmentId === null) return null;
  if (!(await db.department.findUnique({ where: { id: departmentId }, select: { id: true } }))) throw notFound('Departamento');
  return departmentId;
}

export function listChannels(ctx: Context, query: Selection = {}) {
  return ctx.db.channel.findMany({ ...query, orderBy: [{ created_at: 'asc' }, { id: 'asc' }] });
}

export async function getChannel(ctx: Context, id: string, query: Selection = {}) {
  const channel = await ctx.db.channel.findUnique({ ...query, where: { id } });
  if (!channel) throw notFound('Canal');
  return channel;
}

export async function createChannel(ctx: Context, input: ChannelInput, query: Selection = {}) {
  const name = requiredText('name', input.name, 100);
  if (!input.provider) throw invalidField('provider', 'é obrigatório (test ou whatsapp_cloud)');
  const config = await channelConfig(ctx, input.provider, input.config);
  const department_id = (await departmentRef(ctx.db, input.department_id)) ?? null;
  return ctx.db.channel.create({ ...query, data: { name, provider: input.provider, department_id, active: input.active ?? true, config } });
}

export async function updateChannel(ctx: Context, id: string, input: ChannelInput, query: Selection = {}) {
  const channel = await ctx.db.channel.findUnique({ where: { id }, select: { provider: true } });
  if (!channel) throw notFound('Canal');
  const data: { name?: string; department_id?: string | null; active?: boolean; config?: Record<string, string> } = {};
  if (input.name !== undefined) data.name = requiredText('name', input.name, 100);
  if (input.active != null) data.active = input.active;
  if (input.active === null) throw invalidField('active', 'deve ser true ou false');
  // The whole config is replaced: a config is valid or refused as a unit.
  if (input.config !== undefined) data.config = await channelConfig(ctx, channel.provider, input.config);
  data.department_id = await departmentRef(ctx.db, input.department_id);
  if (data.department_id === undefined) delete data.department_id;
  const { count } = await ctx.db.channel.updateMany({ where: { id }, data });
  if (count === 0) throw notFound('Canal');
  return ctx.db.channel.findUniqueOrThrow({ ...query, where: { id } });
}

export async function deleteChannel(ctx: Context, id: string) {
  const { count } = await ctx.db.channel.deleteMany({ where: { id } });
  if (count === 0) throw notFound('Canal');
  return true;
}
