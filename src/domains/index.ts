// The list of domains: the one place a new domain is added. Importing a domain registers its schema
// types and fields; the route table, the response style of each REST area, the permission catalogue,
// the event types, the stored-file columns and the row policies are derived from this list (and, by src/workers.ts and
// src/start-hooks.ts, the queues and the start hooks).
import { guardRootFields } from '../auth/access.js';
import { registerPermissions } from '../auth/permissions.js';
import { registerEventTypes } from '../events/types.js';
import { registerReactions } from '../events/emit.js';
import { registerStoredFiles } from '../storage/stored-file-columns.js';
import { registerRowPolicies } from '../db/row-policy.js';
import { builder } from '../schema/builder.js';
import { sliceListFields } from '../schema/time-slices.js';
import type { DomainManifest } from './manifest.js';
import { accountsDomain } from './accounts/index.js';
import { leadsDomain } from './leads/index.js';
import { pipelinesDomain } from './pipelines/index.js';
import { productsDomain } from './products/index.js';
import { dealsDomain } from './deals/index.js';
import { templatesDomain } from './templates/index.js';
import { knowledgeDomain } from './knowledge/index.js';
import { webhooksDomain } from './webhooks/index.js';
import { uploadsDomain } from './uploads/index.js';
import { messagingDomain } from './messaging/index.js';
import { cadencesDomain } from './cadences/index.js';

export const domains: readonly DomainManifest[] = [
  accountsDomain,
  leadsDomain,
  pipelinesDomain,
  productsDomain,
  dealsDomain,
  templatesDomain,
  knowledgeDomain,
  webhooksDomain,
  uploadsDomain,
  messagingDomain,
  cadencesDomain,
];

registerPermissions(domains.flatMap((d) => d.permissions ?? []));
for (const domain of domains) registerEventTypes(domain.events ?? []);
registerReactions(domains.flatMap((d) => d.reactions ?? []));
registerStoredFiles(domains.flatMap((d) => d.storedFiles ?? []));
registerRowPolicies(domains.flatMap((d) => d.rowPolicies ?? []));

/**
 * The schema, once every domain has registered its types and fields: each root field guarded by its
 * declared access, each list field resolved in turn with other work (schema/time-slices.ts).
 */
export const schema = sliceListFields(guardRootFields(builder.toSchema({ sortSchema: false }), domains));
