// One process at a time on an embedded database directory. PGlite does not lock its files, and a second
// process on the same directory silently loses writes (a tenant created by the CLI while the server ran
// was gone after a restart). The lock is a file beside the database holding its owner's pid and start
// time; a lock whose owner is gone (kill -9, a crash, a container restarted with the same pid) is taken
// over, and the lock is removed on close or when the process exits.
import fs from 'node:fs';

export class DataDirInUseError extends Error {}

interface Owner {
  pid: number;
  /** Kernel start time of the process (Linux), so that a reused pid is not taken for the owner. */
  start: string | null;
  since: string;
}

export interface DataDirLock {
  release(): void;
}

/** Lock files this process holds: a second open of the same directory in one process is refused too. */
const held = new Set<string>();

export function lockDataDir(dir: string): DataDirLock {
  const file = `${dir}.lock`;
  const mine = JSON.stringify({ pid: process.pid, start: processStart(process.pid), since: new Date().toISOString() } satisfies Owner);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(file, mine)) return hold(file, mine);
    const found = read(file);
    if (found === null) continue; // released meanwhile
    const owner = parse(found);
    if (owner && (held.has(file) || alive(owner))) {
      throw new DataDirInUseError(
        `The data directory ${dir} is in use by process ${owner.pid} (since ${owner.since}). The embedded database ` +
          `takes one process at a time: stop the server before running the CLI, or use PostgreSQL (DATABASE_URL). ` +
          `Lock file: ${file}`,
      );
    }
    removeStale(file, found);
  }
  throw new DataDirInUseError(`Could not lock the data directory ${dir}: ${file} keeps changing`);
}

function hold(file: string, mine: string): DataDirLock {
  held.add(file);
  const release = () => {
    if (!held.delete(file)) return;
    process.off('exit', release);
    // Only our own lock: never one another process took over.
    if (read(file) === mine) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { release };
}

/** Creates the lock with its content in one step (a hard link), so no one ever reads it half-written. */
function create(file: string, content: string): boolean {
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, content);
  try {
    fs.linkSync(temp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/**
 * Removes a stale lock unless someone replaced it since it was read: it is moved aside first, and put
 * back if what was moved is not the stale lock.
 */
function removeStale(file: string, stale: string) {
  const aside = `${file}.${process.pid}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    if (read(aside) !== stale) fs.linkSync(aside, file);
  } catch {
    // Another process holds a new lock there already; the next attempt reads it.
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Null for a lock this code did not write: it cannot name a live owner, so it is stale. */
function parse(text: string): Owner | null {
  try {
    const owner = JSON.parse(text) as Owner;
    return Number.isInteger(owner?.pid) && owner.pid > 0 ? owner : null;
  } catch {
    return null;
  }
}

function alive(owner: Owner): boolean {
  // Not held by this process (checked before), so our own pid there is a previous life of it.
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = processStart(owner.pid);
  return !(owner.start && start && owner.start !== start);
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. Null elsewhere. */
function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; the fields after it do not.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
