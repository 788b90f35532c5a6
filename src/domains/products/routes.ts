import { route } from '../../rest/route-table.js';

export const productRoutes = [
  route({ method: 'GET', path: '/pipeline/products', field: 'Query.products', style: 'bare' }),
  route({ method: 'POST', path: '/pipeline/products', field: 'Mutation.createProduct', style: 'bare', status: 201 }),
  route({ method: 'PUT', path: '/pipeline/products/:id', field: 'Mutation.updateProduct', style: 'bare' }),
  route({ method: 'DELETE', path: '/pipeline/products/:id', field: 'Mutation.deleteProduct', style: 'bare' }),
];
