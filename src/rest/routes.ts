// The route table: every documented REST path, joined from the domains. A path not listed here is 404.
import { accountRoutes } from '../domains/accounts/routes.js';
import { leadRoutes } from '../domains/leads/routes.js';
import type { RestRoute } from './route-table.js';

export const restRoutes: RestRoute[] = [...accountRoutes, ...leadRoutes];
