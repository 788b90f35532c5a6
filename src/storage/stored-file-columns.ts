// Which columns hold storage keys: each domain that keeps files in storage declares its tables in its
// manifest (`storedFiles`), registered once from the list of domains (domains/index.ts). The start-up
// sweep must never remove a file one of them records, and the media proxy serves exactly the files they
// record: domains/uploads/stored-keys.ts builds both statements from this list.

export interface StoredFileColumns {
  table: string;
  /** The storage key (also the file's media proxy path); may be null where a row has no file. */
  key: string;
  /** The content type recorded with the file, which the media proxy answers with. */
  contentType: string;
}

/** The names go into SQL as they are: declared by the code, never by a request. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

const registered: StoredFileColumns[] = [];

/** Called once with every domain's columns, in the order of the domains list. */
export function registerStoredFiles(columns: readonly StoredFileColumns[]): void {
  for (const c of columns) {
    const names = [c.table, c.key, c.contentType];
    if (!names.every((n) => IDENTIFIER.test(n))) throw new Error(`Stored-file columns ${names.join(', ')}: not plain SQL names`);
    registered.push(c);
  }
}

/** The list, once the domains have registered it: an entry point that forgot is a programming error. */
export function storedFileColumns(): readonly StoredFileColumns[] {
  if (!registered.length) throw new Error('No stored-file columns registered: import src/domains/index.js in this entry point');
  return registered;
}
