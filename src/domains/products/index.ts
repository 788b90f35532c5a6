// The product catalog, global per organisation (bare style).
import { defineDomain } from '../manifest.js';
import './fields.js';

export const productsDomain = defineDomain({
  name: 'products',
  description: 'The product catalogue of the organisation. Bare style.',
  permissions: [
    { name: 'pipeline.products.manage', roles: ['owner', 'admin'], description: 'Create, change and delete catalog products.' },
  ],
  routes: [
    {
      method: 'GET',
      path: '/pipeline/products',
      field: 'Query.products',
      style: 'bare',
      access: 'pipeline.view',
      summary: 'List catalog products',
    },
    {
      method: 'POST',
      path: '/pipeline/products',
      field: 'Mutation.createProduct',
      style: 'bare',
      status: 201,
      access: 'pipeline.products.manage',
      summary: 'Create a product',
    },
    {
      method: 'PUT',
      path: '/pipeline/products/:id',
      field: 'Mutation.updateProduct',
      style: 'bare',
      access: 'pipeline.products.manage',
      summary: 'Update a product',
    },
    {
      method: 'DELETE',
      path: '/pipeline/products/:id',
      field: 'Mutation.deleteProduct',
      style: 'bare',
      access: 'pipeline.products.manage',
      summary: 'Delete a product (lines become one-off)',
    },
  ],
});
