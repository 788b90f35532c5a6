// `npm run cli -- backup FILE` / `restore FILE`: the embedded database ($DATA_DIR/db) and the stored files
// (STORAGE_DIR) in one gzip'd tar. Consistency comes from the data directory's lock (pglite-lock.ts):
// a backup takes it, so it refuses while the server (or anything else) has the database open, and no
// one can open it while the files are read. Before reading, the database is opened and closed once, which
// replays what a crashed process left in its write-ahead log and ends with a clean shutdown: the
// directory is then a stopped PostgreSQL cluster, which PostgreSQL's docs call a valid file-system backup.
// A restore goes only into an empty DATA_DIR (and STORAGE_DIR), never over data.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { lockDataDir } from './pglite-lock.js';

/** The archive's first entry: what it holds, checked before a restore writes anything. */
export interface BackupManifest {
  format: 'funil-backup';
  version: 1;
  created_at: string;
  /** Migrations applied to the database when it was backed up. */
  migrations: string[];
  /** Stored files (under `files/`). */
  files: number;
}

const MANIFEST = 'funil-backup.json';

export class BackupError extends Error {}

interface Locations {
  /** The PGlite data directory: $DATA_DIR/db. */
  dbDir: string;
  storageDir: string;
}

async function openEmbedded(dir: string) {
  const { PGlite } = await import('@electric-sql/pglite');
  const { unaccent } = await import('@electric-sql/pglite/contrib/unaccent');
  return PGlite.create(dir, { extensions: { unaccent } });
}

async function appliedMigrations(dir: string): Promise<string[]> {
  const lite = await openEmbedded(dir);
  try {
    const present = await lite.query<{ t: string | null }>(`SELECT to_regclass('"_prisma_migrations"')::text AS t`);
    if (!present.rows[0].t) return [];
    const rows = await lite.query<{ migration_name: string }>(
      'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name',
    );
    return rows.rows.map((r) => r.migration_name);
  } finally {
    await lite.close();
  }
}

function countFiles(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).length;
}

export async function backup({ dbDir, storageDir }: Locations, file: string): Promise<BackupManifest> {
  if (!fs.existsSync(path.join(dbDir, 'PG_VERSION'))) throw new BackupError(`There is no embedded database in ${dbDir} to back up.`);
  const lock = lockDataDir(dbDir); // throws DataDirInUseError while the server runs
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'funil-backup-'));
  const partial = `${path.resolve(file)}.partial`;
  try {
    const manifest: BackupManifest = {
      format: 'funil-backup',
      version: 1,
      created_at: new Date().toISOString(),
      migrations: await appliedMigrations(dbDir),
      files: countFiles(storageDir),
    };
    // The archive's names are fixed (db/, files/) wherever the directories are: links in a staging
    // directory that tar follows.
    fs.writeFileSync(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    fs.symlinkSync(dbDir, path.join(staging, 'db'));
    const entries = [MANIFEST, 'db'];
    if (fs.existsSync(storageDir)) {
      fs.symlinkSync(storageDir, path.join(staging, 'files'));
      entries.push('files');
    }
    // Written beside the target and renamed when complete: a failed backup never looks like a good one.
    await tar.create({ gzip: true, file: partial, cwd: staging, follow: true, portable: true }, entries);
    fs.renameSync(partial, file);
    return manifest;
  } finally {
    fs.rmSync(partial, { force: true });
    fs.rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}

async function readManifest(file: string): Promise<BackupManifest> {
  let text: string | undefined;
  await tar
    .list({
      file,
      filter: (p) => p === MANIFEST,
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => (text = Buffer.concat(chunks).toString('utf8')));
      },
    })
    .catch((e) => {
      throw new BackupError(`${file} is not a Funil backup (a gzip'd tar): ${(e as Error).message}`);
    });
  const manifest = text === undefined ? undefined : (JSON.parse(text) as BackupManifest);
  if (manifest?.format !== 'funil-backup') throw new BackupError(`${file} is not a Funil backup: it has no ${MANIFEST}.`);
  if (manifest.version !== 1)
    throw new BackupError(`${file} is a backup of format version ${String(manifest.version)}; this version reads version 1.`);
  return manifest;
}

/** True when `dir` is missing or holds nothing but the names in `except`. */
function isEmpty(dir: string, except: string[] = []): boolean {
  return !fs.existsSync(dir) || fs.readdirSync(dir).every((name) => except.includes(name));
}

export async function restore({ dataDir, dbDir, storageDir }: Locations & { dataDir: string }, file: string): Promise<BackupManifest> {
  if (!fs.existsSync(file)) throw new BackupError(`No such file: ${file}`);
  const manifest = await readManifest(file);
  const refuse = (dir: string, what: string) =>
    new BackupError(
      `${what} ${dir} is not empty. A restore goes only into an empty directory: point DATA_DIR${what === 'STORAGE_DIR' ? ' and STORAGE_DIR' : ''} at a new one (or move this one away) and run the restore again.`,
    );
  if (!isEmpty(dataDir)) throw refuse(dataDir, 'DATA_DIR');
  if (!isEmpty(storageDir)) throw refuse(storageDir, 'STORAGE_DIR');
  fs.mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDir(dbDir); // a server started meanwhile waits for nothing: it is refused
  try {
    if (!isEmpty(dataDir, [path.basename(`${dbDir}.lock`)])) throw refuse(dataDir, 'DATA_DIR');
    fs.mkdirSync(dbDir, { recursive: true });
    fs.mkdirSync(storageDir, { recursive: true });
    const under = (prefix: string) => (p: string) => p.startsWith(`${prefix}/`);
    await tar.extract({ file, cwd: dbDir, strip: 1, filter: under('db') });
    await tar.extract({ file, cwd: storageDir, strip: 1, filter: under('files') });
    // PGlite must open what was restored, and find the migrations the manifest lists.
    const found = await appliedMigrations(dbDir);
    if (found.join() !== manifest.migrations.join())
      throw new BackupError(`The restored database does not hold the migrations the backup lists.`);
    return manifest;
  } catch (e) {
    // Both directories were empty: leave them so, for another try.
    fs.rmSync(dbDir, { recursive: true, force: true });
    for (const name of fs.existsSync(storageDir) ? fs.readdirSync(storageDir) : [])
      fs.rmSync(path.join(storageDir, name), { recursive: true, force: true });
    throw e;
  } finally {
    lock.release();
  }
}
