// The extraction process's code as a bundle: child/ and the parsers it imports (mdast/micromark, htmlparser2)
// in a few files instead of hundreds. Node loads an ES module graph file by file, and Markdown's parsers
// are some 250 small modules: loading them took about 190 ms of each Markdown file's process on a slow
// machine, 47 ms bundled. Every process pays it once (a kept process not again: launcher.mjs).
// Built with esbuild by the launcher thread on first use, into node_modules/.cache/funil-extract, and
// reused by every later server while none of its inputs changed (their sizes and times are kept beside
// it). Until it is ready, or when it cannot be built (node_modules read-only, esbuild missing), processes
// run child/main.mjs as it is: the same code, slower to load.
// pdf.js, exceljs, SheetJS and yauzl stay outside (loaded from node_modules as they are): they are few
// files each, and pdf.js finds its fonts and worker relative to its package.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the build's options change: a bundle built with other options is not reused. */
const BUILD = 1;
const SOURCE_ENTRY = fileURLToPath(new URL('./child/main.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'funil-extract');
const LATEST = path.join(CACHE, 'latest.json');
/** Builds older than this, other than the one in use, are deleted by the next build. */
const STALE_MS = 24 * 60 * 60 * 1000;
/** How often a build in use has its time renewed; far below STALE_MS. */
const TOUCH_MS = 60 * 60 * 1000;

/** @typedef {{ build: number, dir: string, inputs: Record<string, [size: number, mtimeMs: number]> }} Latest */

/** @type {string | undefined} */
let entry;
/** @type {NodeJS.Timeout | undefined} */
let renewing;

/**
 * The script a new extraction process runs: the bundle when it is built and current, else child/main.mjs
 * (while the bundle is being built, the first time, or when it cannot be).
 */
export function childEntry() {
  // A build is deleted only when a day old and no longer current: a server up for that long through a
  // redeploy finds the new one.
  if (entry && (entry === SOURCE_ENTRY || keptFresh(entry))) return entry;
  entry = currentBundle() ?? SOURCE_ENTRY;
  if (entry !== SOURCE_ENTRY) keptFresh(entry);
  // Also while no file comes: the spares waiting meanwhile were started from it.
  renewing ??= setInterval(() => entry && entry !== SOURCE_ENTRY && keptFresh(entry), TOUCH_MS).unref();
  if (entry === SOURCE_ENTRY) {
    build().then(
      (built) => (entry = built),
      () => {}, // stays on the sources
    );
  }
  return entry;
}

/**
 * Whether the bundle `bundled` is still there; its directory's time is renewed while in use (at most
 * hourly), so that a later build, which deletes day-old builds other than its own, leaves it to the
 * servers and waiting processes still running it: a process loads a kind's parser only when its file
 * comes, and would find the chunk gone.
 * @param {string} bundled
 */
function keptFresh(bundled) {
  const dir = path.dirname(bundled);
  try {
    if (Date.now() - fs.statSync(dir).mtimeMs > TOUCH_MS) {
      const now = new Date();
      fs.utimesSync(dir, now, now);
    }
    return fs.existsSync(bundled);
  } catch {
    return false;
  }
}

/** The bundle on disk when it was built from the files now there, by this version of the build. Exported for tests. */
export function currentBundle() {
  try {
    const latest = /** @type {Latest} */ (JSON.parse(fs.readFileSync(LATEST, 'utf8')));
    if (latest.build !== BUILD) return undefined;
    for (const [file, [size, mtimeMs]] of Object.entries(latest.inputs)) {
      const stat = fs.statSync(path.join(ROOT, file));
      if (stat.size !== size || stat.mtimeMs !== mtimeMs) return undefined;
    }
    const bundled = path.join(CACHE, latest.dir, 'main.mjs');
    return fs.existsSync(bundled) ? bundled : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds into a directory of its own, then points latest.json at it (a rename, so that servers building at
 * once each leave a whole bundle and readers never see half of one).
 * @returns {Promise<string>} the bundle's entry
 */
async function build() {
  const esbuild = await import('esbuild');
  const dir = `${Date.now().toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const outdir = path.join(CACHE, dir);
  const result = await esbuild
    .build({
      absWorkingDir: ROOT,
      entryPoints: [SOURCE_ENTRY, fileURLToPath(new URL('./child/watchdog.mjs', import.meta.url))],
      outdir,
      bundle: true,
      splitting: true, // each kind's parser stays in a chunk of its own, loaded only for its files
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node.split('.')[0]}`,
      outExtension: { '.js': '.mjs' },
      external: ['pdfjs-dist', 'exceljs', 'xlsx', 'yauzl'],
      // CommonJS inside the bundle calls require(), which an ES module lacks.
      banner: { js: "import { createRequire as __funilRequire } from 'node:module'; const require = __funilRequire(import.meta.url);" },
      metafile: true,
      logLevel: 'silent',
    })
    .finally(() => esbuild.stop()); // its service process would otherwise stay beside the server
  /** @type {Latest['inputs']} */
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const stat = fs.statSync(path.join(ROOT, file));
    inputs[file] = [stat.size, stat.mtimeMs];
  }
  const temporary = `${LATEST}.${dir}`;
  fs.writeFileSync(temporary, JSON.stringify(/** @type {Latest} */ ({ build: BUILD, dir, inputs })));
  fs.renameSync(temporary, LATEST);
  removeStaleBuilds(dir);
  return path.join(outdir, 'main.mjs');
}

/**
 * Other servers may still start processes from an older build, so only day-old ones go.
 * @param {string} keep
 */
function removeStaleBuilds(keep) {
  for (const name of fs.readdirSync(CACHE)) {
    const file = path.join(CACHE, name);
    try {
      if (name !== keep && name !== 'latest.json' && Date.now() - fs.statSync(file).mtimeMs > STALE_MS)
        fs.rmSync(file, { recursive: true, force: true });
    } catch {
      // removed by another server meanwhile
    }
  }
}
