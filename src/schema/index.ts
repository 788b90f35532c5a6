// The whole schema: importing a domain's fields module registers its types and root fields.
import { builder } from './builder.js';
import '../domains/common/types.js';
import '../domains/accounts/fields.js';
import '../domains/leads/fields.js';
import '../domains/pipelines/types.js';
import '../domains/products/types.js';
import '../domains/pipelines/fields.js';
import '../domains/deals/fields.js';

export const schema = builder.toSchema({ sortSchema: false });
