// Who extracts next (decisions.md, "Bounded work"): one extraction at a time per organisation, at most
// `total` in all, and the organisations waiting take turns, so one organisation's queue delays another's
// file by one extraction at most. A waiter whose request is cancelled (the client went away) leaves the
// queue; one that waits longer than `waitMs` gets a 503 with Retry-After.
import { AppError } from '../../../errors.js';
import { setExtractionQueue } from '../../../observability/metrics.js';
import { abortReason } from './run-child.js';

interface Waiter {
  grant: () => void;
  refuse: (error: unknown) => void;
}

export class ExtractionSlots {
  private running = 0;
  private readonly busy = new Set<string>();
  /** Organisations with waiters, in the order they are served; each keeps its own line. */
  private readonly turns: string[] = [];
  private readonly lines = new Map<string, Waiter[]>();

  constructor(
    readonly total: number,
    readonly waitMs: number,
    /** Told the running and waiting counts on every change (the extraction gauges of /metrics by default). */
    private readonly onChange: (running: number, waiting: number) => void = setExtractionQueue,
  ) {}

  /** Resolves with the slot's release once `org` may extract; call the release exactly once. */
  acquire(org: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (!this.busy.has(org) && this.running < this.total && !this.lines.has(org)) return Promise.resolve(this.take(org));
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancelled);
        const line = this.lines.get(org);
        const at = line?.indexOf(waiter) ?? -1;
        if (at >= 0) line!.splice(at, 1);
        if (line && !line.length) this.forget(org);
        this.report();
      };
      const cancelled = () => {
        leave();
        reject(abortReason(signal!));
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          resolve(this.take(org));
        },
        refuse: reject,
      };
      const timer = setTimeout(() => {
        leave();
        reject(busyError(this.waitMs));
      }, this.waitMs);
      signal?.addEventListener('abort', cancelled, { once: true });
      if (!this.lines.has(org)) {
        this.lines.set(org, []);
        this.turns.push(org);
      }
      this.lines.get(org)!.push(waiter);
      this.report();
    });
  }

  /** Files of `org` waiting for their turn. */
  waitingOf(org: string): number {
    return this.lines.get(org)?.length ?? 0;
  }

  /** Extractions running now, and organisations waiting (for tests and metrics). */
  get state() {
    return { running: this.running, waiting: [...this.lines.values()].reduce((n, line) => n + line.length, 0) };
  }

  private take(org: string): () => void {
    this.running++;
    this.busy.add(org);
    this.report();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.busy.delete(org);
      // It has had its turn: the organisations waiting behind it go first.
      const at = this.turns.indexOf(org);
      if (at >= 0) this.turns.push(...this.turns.splice(at, 1));
      this.next();
      this.report();
    };
  }

  /** The extraction gauges of /metrics. */
  private report() {
    const { running, waiting } = this.state;
    this.onChange(running, waiting);
  }

  /** Hands free slots to the first organisations in turn that are not extracting; a served one goes last. */
  private next() {
    for (let i = 0; i < this.turns.length && this.running < this.total;) {
      const org = this.turns[i];
      if (this.busy.has(org)) {
        i++;
        continue;
      }
      this.turns.splice(i, 1);
      const line = this.lines.get(org)!;
      if (line.length > 1) this.turns.push(org);
      line[0].grant(); // leaves its line (and forgets the organisation if it was the last)
    }
  }

  private forget(org: string) {
    this.lines.delete(org);
    const at = this.turns.indexOf(org);
    if (at >= 0) this.turns.splice(at, 1);
  }
}

function busyError(waitMs: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return new AppError('SERVICE_UNAVAILABLE', 'Muitas extrações de arquivo em andamento; tente novamente em instantes', {
    retry_after: retryAfter,
  });
}
