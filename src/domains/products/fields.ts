// Root fields of the product catalog.
import { syncArrayArgs } from '../common/sync.js';
import { idArg } from '../common/args.js';
import { listCount } from '../../schema/list-bounds.js';
import { builder } from '../../schema/builder.js';
import { SUCCESS, Success } from '../common/types.js';
import { Product } from './types.js';
import * as products from './service.js';

builder.queryField('products', (t) =>
  t.prismaField({
    type: [Product],
    extensions: listCount('products'),

    description:
      'The organisation’s product catalog, by name (pipeline.view); with `updated_since` or `cursor`, a sync page: by updated_at, id ascending.',
    args: syncArrayArgs,
    resolve: (query, _root, args, ctx) => products.listProducts(ctx, args, query),
  }),
);

builder.mutationField('createProduct', (t) =>
  t.prismaField({
    type: Product,
    description: 'Adds a product to the catalog (pipeline.products.manage).',
    args: {
      name: t.arg.string({ required: true, description: 'Product name.' }),
      price: t.arg.float({ description: 'Default unit price; not negative; default 0.' }),
    },
    resolve: (query, _root, args, ctx) => products.createProduct(ctx, args, query),
  }),
);

builder.mutationField('updateProduct', (t) =>
  t.prismaField({
    type: Product,
    description: 'Updates a product (pipeline.products.manage). Existing deal lines keep their copied name and price.',
    args: {
      ...idArg('The product.'),
      name: t.arg.string({ required: true, description: 'Product name.' }),
      price: t.arg.float({ description: 'Default unit price; not negative; omitted keeps it.' }),
    },
    resolve: (query, _root, args, ctx) => products.updateProduct(ctx, args.id, args, query),
  }),
);

builder.mutationField('deleteProduct', (t) =>
  t.field({
    type: Success,
    description:
      'Deletes a product (pipeline.products.manage). Its deal lines become one-off lines (custom, no product_id) with the same name and price; totals do not change.',
    args: idArg('The product.'),
    resolve: async (_root, args, ctx) => (await products.deleteProduct(ctx, args.id), SUCCESS),
  }),
);
