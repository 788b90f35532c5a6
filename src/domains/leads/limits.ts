// The tag cap, on its own so that the service (which checks it) and the schema types (which count
// `tags` at it) share it without importing each other; deals use it too.

/** Tags on one lead or one deal, at most (decisions.md "Bounded work"): GraphQL counts `tags` at this cap. */
export const MAX_TAGS = 100;
