// The bench fails when a FileHandle is left open somewhere: Node reports one the garbage collector closes
// with warning DEP0137 ("Closing file descriptor N on garbage collection"). After each line the guard
// forces a full collection (so a handle the line dropped is reported in that line, not some later one)
// and gives the warning a moment to arrive; the run then exits non-zero, naming the lines.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const leaks: string[] = [];
let current = 'start-up';

// Node warns "Closing file descriptor N on garbage collection" (no code) for every such handle, and
// DEP0137 (the deprecation) only for the first one of the process: both count.
const LEAK = /^Closing file descriptor \d+ on garbage collection/;
process.on('warning', (warning: Error & { code?: string }) => {
  if (warning.code === 'DEP0137' || LEAK.test(warning.message)) leaks.push(`${current}: ${warning.message.slice(0, 80)}`);
});

/** The line now running: a leak reported from here on is charged to it. */
export function enterLine(name: string): void {
  current = name;
}

/** Collects garbage twice (a FileHandle's close runs after its object is collected) and waits for the warnings. */
export async function collectLeaks(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The DEP0137 warnings seen so far, each with the line it came in. */
export function fileHandleLeaks(): string[] {
  return [...leaks];
}
