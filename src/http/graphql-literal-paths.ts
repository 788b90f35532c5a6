// Where in an argument a literal the validation refused sits: `createLead(name: 42)` → `name`,
// `createDeal(products: [{qty: 1}, {qty: 1.5}])` → `products[1].qty`, the same JSON paths `details` gives
// for variables (errors.ts) and REST bodies.
import { BREAK, Kind, visit, type ASTNode, type DocumentNode, type GraphQLError } from 'graphql';

/** The `{field, message}` of a refused argument literal, or undefined when the error is about something else. */
export function literalDetails(error: GraphQLError, document: DocumentNode): { field: string; message: string }[] | undefined {
  const target = error.nodes?.[0];
  if (!target) return undefined;
  const field = argumentPath(document, target);
  return field ? [{ field, message: error.message }] : undefined;
}

function argumentPath(document: DocumentNode, target: ASTNode): string | undefined {
  let found: string | undefined;
  visit(document, {
    enter(node, _key, parent, _path, ancestors) {
      if (node !== target) return undefined;
      // `ancestors` stops before the parent.
      found = pathOf([...ancestors, ...(parent ? [parent] : []), node]);
      return BREAK;
    },
  });
  return found;
}

/** Builds the path from the argument down, through object fields and list items. */
function pathOf(chain: readonly (ASTNode | readonly ASTNode[])[]): string | undefined {
  let path: string | undefined;
  chain.forEach((link, i) => {
    if (Array.isArray(link) || !('kind' in link)) return;
    const node = link as ASTNode;
    if (node.kind === Kind.ARGUMENT) path = node.name.value;
    else if (path === undefined) return;
    else if (node.kind === Kind.OBJECT_FIELD) path += `.${node.name.value}`;
    else if (node.kind === Kind.LIST) {
      const items = chain[i + 1];
      const item = chain[i + 2];
      if (Array.isArray(items) && item) path += `[${items.indexOf(item)}]`;
    }
  });
  return path;
}
