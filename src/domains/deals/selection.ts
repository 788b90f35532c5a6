// Whether a field's selection (through fragments and inline fragments) asks for any of some sub-fields.
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** `deep`: also look below nested fields (a connection's edges → node). */
export function selectsAny(info: GraphQLResolveInfo, names: ReadonlySet<string>, deep = false): boolean {
  const visit = (set: SelectionSetNode | undefined, depth: number): boolean => {
    if (!set || depth > 10) return false;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD && (names.has(sel.name.value) || (deep && visit(sel.selectionSet, depth + 1)))) return true;
      if (sel.kind === Kind.INLINE_FRAGMENT && visit(sel.selectionSet, depth + 1)) return true;
      if (sel.kind === Kind.FRAGMENT_SPREAD && visit(info.fragments[sel.name.value]?.selectionSet, depth + 1)) return true;
    }
    return false;
  };
  return info.fieldNodes.some((node) => visit(node.selectionSet, 0));
}
