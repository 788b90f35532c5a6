// The product catalog: global per organisation, shared by every pipeline.
import { builder } from '../../schema/builder.js';

export const Product = builder.prismaObject('Product', {
  description: 'A catalog product. Deal lines copy its name and price when added.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    name: t.exposeString('name'),
    price: t.float({ description: 'Default unit price.', select: { price: true }, resolve: (p) => Number(p.price) }),
    updated_at: t.expose('updated_at', { type: 'DateTime', description: 'Its last change: what `updated_since` compares.' }),
  }),
});
