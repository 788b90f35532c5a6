// BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of the bench process (the servers) while one measured run
// goes, written to <dir>/<name>.cpuprofile (open it in Chrome DevTools or speedscope). Only the run is
// profiled, not start-up, seeding or the other lines; without the variable `profiled` just runs `fn`.
// The fairness line's extraction server is a process of its own: it writes its own profile (fairness.ts).
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name.replace(/[^\w.-]+/g, '-')}.cpuprofile`), JSON.stringify(profile));
  }
}
