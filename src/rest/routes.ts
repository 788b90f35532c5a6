// The route table: every documented REST path, joined from the domains. A path not listed here is 404.
import { accountRoutes } from '../domains/accounts/routes.js';
import { leadRoutes } from '../domains/leads/routes.js';
import { pipelineRoutes } from '../domains/pipelines/routes.js';
import { productRoutes } from '../domains/products/routes.js';
import { dealRoutes } from '../domains/deals/routes.js';
import type { RestRoute } from './route-table.js';

export const restRoutes: RestRoute[] = [...accountRoutes, ...leadRoutes, ...pipelineRoutes, ...productRoutes, ...dealRoutes];
