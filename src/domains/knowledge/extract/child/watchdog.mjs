// The extraction process's own watchdog, where the launcher thread cannot watch it (no /proc to read its
// memory, or no setpriv to have the kernel end it with the server): a thread of its own, so it runs even
// while the main thread is stuck inside a parser. It costs about 0.1 s of CPU per file to start. Every 25 ms it ends the process (SIGKILL, after one line on stderr saying why) when
// - its resident memory passes the budget: ArrayBuffers live outside the heap limit, and libraries
//   inflate into them (pdf.js a whole content stream, JSZip a whole zip entry);
// - the server that started it is gone (the process's parent changed): no extraction outlives its server,
//   even one killed with SIGKILL, whose time limit died with it.
import fs from 'node:fs';
import { workerData } from 'node:worker_threads';

const MB = 1024 * 1024;
const { maxRssMb, serverPid } = /** @type {{ maxRssMb: number, serverPid: number }} */ (workerData);

/** @param {string} why */
function end(why) {
  try {
    fs.writeSync(2, `funil-extract: ${why}\n`);
  } catch {
    // EPIPE once the server reading stderr is gone: the process must end all the same
  }
  process.kill(process.pid, 'SIGKILL');
}

setInterval(() => {
  const rssMb = process.memoryUsage.rss() / MB;
  if (rssMb > maxRssMb) end(`memory ${Math.round(rssMb)} MB, over the ${maxRssMb} MB budget`);
  else if (process.ppid !== serverPid) end('the server is gone');
}, 25);
