// The pace of one organisation's knowledge files while others are active (decisions.md, "Bounded work"):
// after a file of N bytes, the organisation's next file starts no sooner than N ÷
// EXTRACT_PACE_BYTES_PER_SECOND seconds after it did (files sent at once queue one after another).
// Turns and priorities (slots.ts, index.ts) decide who goes first; they do not bound how much of the
// machine a flooder's files take between another organisation's requests: each 1.7 MB CSV costs the
// server's main thread, an extraction process and the database's `to_tsvector` together about 200 ms of
// CPU, and an organisation sending them back to back kept two cores busy, so every request of everyone
// else waited for a core (bench fairness line, in a full run: B's p99 ×2.6). Paced to 2 MB/s, the
// flooder leaves room (×1.09 in the full run, 0.91–1.26 in runs of the line; docs/benchmarks.md).
// Small files hardly wait (a 34-byte CSV: 17 µs); an organisation alone on the server never does
// (http/active-organisations.ts). Counted per process, like the turns.
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { AppError } from '../../../errors.js';
import { activeOrganisations } from '../../../http/active-organisations.js';

export class KnowledgePace {
  /** When each organisation's next file may start (performance.now() milliseconds). */
  private readonly nextAt = new Map<string, number>();

  constructor(
    readonly bytesPerSecond: number,
    /** Longer than this, a file is not kept waiting: its request gets 429 with the wait as Retry-After (EXTRACT_WAIT_MS). */
    readonly maxWaitMs: number,
    /** Whether an organisation other than this one is active now. */
    private readonly othersActive: (org: string) => boolean,
  ) {}

  /**
   * Books `bytes` of `org`'s at its next due time (now, unless another organisation is active and the
   * organisation's previous files are not yet paid for) and waits for it. Booked before the wait, so that
   * an organisation's files sent at once (GraphQL ones are not admitted one at a time) queue one after
   * another rather than all waiting out the same pause. Rejects with RATE_LIMITED, booking nothing, when
   * the start is further away than `maxWaitMs`; with the signal's reason once aborted.
   */
  async take(org: string, bytes: number, signal?: AbortSignal): Promise<void> {
    if (!(this.bytesPerSecond > 0)) return;
    const now = performance.now();
    const due = this.nextAt.get(org) ?? 0;
    const start = due > now && this.othersActive(org) ? due : now;
    if (start - now > this.maxWaitMs) throw tooFast(start - now);
    const end = start + (bytes / this.bytesPerSecond) * 1000;
    this.forgetPast(now);
    this.nextAt.set(org, end);
    if (start === now) return;
    try {
      await sleep(start - now, undefined, { signal });
    } catch (e) {
      // A file that gives up frees its time, unless a later one has been booked after it.
      if (this.nextAt.get(org) === end) this.nextAt.set(org, start);
      throw e;
    }
  }

  /** How long from now until `org`'s next file is due, in ms (0: now); for tests. */
  bookedAhead(org: string): number {
    return Math.max(0, (this.nextAt.get(org) ?? 0) - performance.now());
  }

  /** Organisations whose next file is already due need no entry: the map holds only those paced now. */
  private forgetPast(now: number) {
    if (this.nextAt.size < 1000) return;
    for (const [org, at] of this.nextAt) if (at <= now) this.nextAt.delete(org);
  }
}

function tooFast(waitMs: number): AppError {
  const seconds = Math.ceil(waitMs / 1000);
  return new AppError(
    'RATE_LIMITED',
    `Esta organização enviou arquivos de conhecimento demais em pouco tempo; o próximo pode ser enviado em ${seconds} s`,
    {
      retry_after: seconds,
    },
  );
}

const paces = new WeakMap<object, KnowledgePace>();

/** The pace of the server with these settings. */
export function knowledgePace(config: { extractPaceBytesPerSecond: number; extractWaitMs: number }): KnowledgePace {
  let pace = paces.get(config);
  if (!pace) {
    const active = activeOrganisations(config);
    const othersActive = (org: string) => active.othersThan(org);
    paces.set(config, (pace = new KnowledgePace(config.extractPaceBytesPerSecond, config.extractWaitMs, othersActive)));
  }
  return pace;
}
