// Which organisations this server has answered lately. The pace of knowledge files
// (domains/knowledge/extract/pace.ts) applies only while another organisation is active: an
// organisation alone on a server is never held back for no one.
// One record per app (keyed by its config, like the extraction scheduler), counted per process.
import { performance } from 'node:perf_hooks';

/** An organisation is active for this long after its last authenticated request began. */
export const ACTIVE_FOR_MS = 2_000;

export class ActiveOrganisations {
  /** The two organisations seen last, most recent first: enough to tell whether anyone but X was seen. */
  private last: { org: string; at: number }[] = [];

  seen(org: string, now = performance.now()): void {
    if (this.last[0]?.org === org) this.last[0].at = now;
    else this.last = [{ org, at: now }, ...this.last.filter((entry) => entry.org !== org)].slice(0, 2);
  }

  /** Whether an organisation other than `org` began a request within ACTIVE_FOR_MS. */
  othersThan(org: string, now = performance.now()): boolean {
    const other = this.last.find((entry) => entry.org !== org);
    return other !== undefined && now - other.at < ACTIVE_FOR_MS;
  }
}

const records = new WeakMap<object, ActiveOrganisations>();

/** The record of the app with this config. */
export function activeOrganisations(config: object): ActiveOrganisations {
  let record = records.get(config);
  if (!record) records.set(config, (record = new ActiveOrganisations()));
  return record;
}
