// BENCH_COMMITS_PER_SECOND (0: none): a writer beside the lines that commits that many transactions a
// second, each given a transaction id (`pg_current_xact_id()`), which changes the database's snapshot.
// The lists remember their totals per snapshot (src/db/snapshot-counts.ts), so a read-only run measures
// pages whose count was skipped; with a writer they count again, as on a server taking writes (the raw
// and PostGraphile baselines count every time). bench/run.ts runs one on the bench's PostgreSQL server,
// the pglite line one on each PGlite server it starts.

export const COMMITS_PER_SECOND = Number(process.env.BENCH_COMMITS_PER_SECOND ?? 0);

/** Runs `commit` COMMITS_PER_SECOND times a second (one at a time) until the returned stop is called. */
export function startCommitter(commit: () => Promise<unknown>): () => number {
  if (!(COMMITS_PER_SECOND > 0)) return () => 0;
  let commits = 0;
  let busy = false;
  const timer = setInterval(
    () => {
      if (busy) return;
      busy = true;
      commit().then(
        () => ((commits += 1), (busy = false)),
        () => (busy = false),
      );
    },
    Math.max(1, Math.round(1000 / COMMITS_PER_SECOND)),
  );
  return () => (clearInterval(timer), commits);
}
