// Search text is matched literally (decisions.md: `%` and `_` in every `search` are literal). LIKE's
// wildcards and its escape character (backslash) are escaped; Prisma's `contains` puts its value into a
// LIKE pattern as it is, on PGlite and PostgreSQL alike, so it needs this as much as raw SQL does.
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => '\\' + c);
}
