// Knowledge extraction is shared fairly (decisions.md, "Bounded work"): one extraction at a time per
// organisation, EXTRACT_CONCURRENCY in all (1 here), organisations served in turns, so another
// organisation's queue delays a file by one extraction at most; a request whose client goes away
// leaves the queue or has its extraction process killed; a file that waits past EXTRACT_WAIT_MS → 503.
// An organisation with files waiting (flooding) has its extraction run at the lowest OS priority. Before
// any of that, an organisation's uploads are admitted one at a time, their bodies read only once
// admitted (uploadAdmission).
import os from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { extractionSlots, IN_SERVER_TEXT_BYTES, uploadAdmission } from '../../src/domains/knowledge/extract/index.js';
import { DEFAULT_EXTRACTION_LIMITS, launcherThread, runExtraction } from '../../src/domains/knowledge/extract/run-child.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { exponentialFormsPdf } from './hostile-files.js';
import { extractionProcessesOf, form } from './helpers.js';

const api = useTestApp({ EXTRACT_CONCURRENCY: '1', EXTRACT_WAIT_MS: '20000' });
const slots = () => extractionSlots(api.config);
/** The organisations' uploads admitted (one each) and waiting before their bodies are read. */
const admitted = () => uploadAdmission(api.config);

/** About 1.7 MB of CSV: its own process and a few hundred ms of parsing. */
const MEDIUM_CSV = 'nome,telefone,cidade,estado\n'.repeat(60_000);
/** About 9 MB: seconds of parsing, long enough to cancel in the middle. */
const LARGE_CSV = 'nome,telefone,cidade,estado,pais,cep\n'.repeat(250_000);

function upload(org: Org, name: string, content: string, signal?: AbortSignal) {
  const body = form({ name }, ['file', `${name}.csv`, content]);
  return api.raw('/backend/knowledge', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body, signal });
}

/** The extraction processes this test's server started (its children running child/main.mjs or its bundle). */
const extractionProcesses = () => extractionProcessesOf();

const settle = () =>
  vi.waitFor(
    () =>
      expect([slots().state, admitted().state]).toEqual([
        { running: 0, waiting: 0 },
        { running: 0, waiting: 0 },
      ]),
    { timeout: 60_000, interval: 50 },
  );

describe('extraction turns', () => {
  it('serves another organisation’s file beside the flooding organisation’s, not after its queue', { timeout: 120_000 }, async () => {
    const a = await api.newOrg('A');
    const b = await api.newOrg('B');
    const finished: string[] = [];
    const flood = Array.from({ length: 4 }, (_, i) => upload(a, `a${i}`, MEDIUM_CSV).then((r) => (finished.push(`A${r.status}`), r)));
    // One of A's uploads is admitted (and extracted), its other three wait before their bodies are read.
    await vi.waitFor(
      () =>
        expect([slots().state, admitted().state]).toEqual([
          { running: 1, waiting: 0 },
          { running: 1, waiting: 3 },
        ]),
      { timeout: 20_000, interval: 20 },
    );
    // Markdown, which is parsed in a process and so takes a turn (small plain text needs none, below).
    const small = await api
      .raw('/backend/knowledge', {
        method: 'POST',
        headers: { authorization: `Bearer ${b.key}` },
        body: form({ name: 'b' }, ['file', 'b.md', '# Ana\n']),
      })
      .then((r) => (finished.push(`B${r.status}`), r));
    expect(small.status).toBe(201);
    await Promise.all(flood);
    // B's extraction ran beside or right after the one of A's running when it arrived: at most that one
    // and the next of A's (which may take the other slot and, on a loaded machine, end before B's process
    // has started) answer before B. In arrival order B would wait for all four.
    expect(finished.filter((f) => f.startsWith('A'))).toEqual(['A201', 'A201', 'A201', 'A201']);
    expect(finished.indexOf('B201')).toBeLessThanOrEqual(2);
  });

  it(
    'runs a flooding organisation’s extraction at the lowest OS priority, a lone file’s at the server’s',
    { timeout: 120_000 },
    async () => {
      const a = await api.newOrg('A');
      await settle();
      // The extraction processes of this server, and the highest niceness each was seen with.
      const seen = new Map<number, number>();
      let watching = true;
      const watch = (async () => {
        while (watching) {
          for (const pid of extractionProcesses()) {
            try {
              seen.set(pid, Math.max(seen.get(pid) ?? 0, os.getPriority(pid)));
            } catch {
              // Ended between the listing and the read.
            }
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      // Three at once: the first ones are extracted while others wait (19), the last alone (0).
      const flood = await Promise.all(Array.from({ length: 3 }, (_, i) => upload(a, `a${i}`, MEDIUM_CSV)));
      watching = false;
      await watch;
      for (const r of flood) expect(r.status).toBe(201);
      const niceness = [...seen.values()];
      expect(niceness.filter((n) => n === 19).length, JSON.stringify(niceness)).toBeGreaterThanOrEqual(1);
      expect(niceness.filter((n) => n === 0).length, JSON.stringify(niceness)).toBeGreaterThanOrEqual(1);
    },
  );

  it(
    'keeps spare processes per priority: a flooder’s file neither takes nor lowers those waiting for the others’ files',
    { timeout: 120_000 },
    async () => {
      await settle();
      // A new launcher: the earlier tests' spares end with the old one.
      await launcherThread().terminate();
      await vi.waitFor(() => expect(extractionProcesses()).toEqual([]), { timeout: 10_000, interval: 20 });
      const input = (text: string) => ({ kind: 'markdown' as const, bytes: Buffer.from(text) });
      /** The waiting processes' pids by priority. */
      const spares = () => {
        const byPriority = new Map<number, number[]>();
        for (const pid of extractionProcesses()) {
          const niceness = os.getPriority(pid);
          byPriority.set(niceness, [...(byPriority.get(niceness) ?? []), pid]);
        }
        return byPriority;
      };
      const counts = () => Object.fromEntries([...spares()].map(([niceness, pids]) => [niceness, pids.length]));
      // A file at the server's priority: two spares at 0 wait for the next ones.
      expect(await runExtraction(input('# A'), DEFAULT_EXTRACTION_LIMITS)).toEqual({ ok: true, text: 'A' });
      await vi.waitFor(() => expect(counts()).toEqual({ 0: 2 }), { timeout: 10_000, interval: 20 });
      const waitingAtZero = spares().get(0)!.sort();
      // A flooding organisation's file (19) runs in a process of its own, and leaves spares at 19 beside them.
      expect(await runExtraction(input('# B'), DEFAULT_EXTRACTION_LIMITS, { niceness: 19 })).toEqual({ ok: true, text: 'B' });
      await vi.waitFor(() => expect(counts()).toEqual({ 0: 2, 19: 2 }), { timeout: 10_000, interval: 20 });
      expect(spares().get(0)!.sort()).toEqual(waitingAtZero);
      const waitingAt19 = spares().get(19)!.sort();
      // The next file at 0 takes one of the spares at 0 (replaced), not the flooder's.
      expect(await runExtraction(input('# C'), DEFAULT_EXTRACTION_LIMITS)).toEqual({ ok: true, text: 'C' });
      await vi.waitFor(() => expect(counts()).toEqual({ 0: 2, 19: 2 }), { timeout: 10_000, interval: 20 });
      expect(waitingAtZero.filter((pid) => spares().get(0)!.includes(pid))).toHaveLength(1);
      expect(spares().get(19)!.sort()).toEqual(waitingAt19);
    },
  );

  it('replaces a spare once its file’s process is gone, or while a long file still runs', { timeout: 120_000 }, async () => {
    await settle();
    await launcherThread().terminate();
    await vi.waitFor(() => expect(extractionProcesses()).toEqual([]), { timeout: 10_000, interval: 20 });
    const atZero = () => extractionProcesses().filter((pid) => os.getPriority(pid) === 0).length;
    expect(await runExtraction({ kind: 'markdown', bytes: Buffer.from('# A') }, DEFAULT_EXTRACTION_LIMITS)).toEqual({
      ok: true,
      text: 'A',
    });
    await vi.waitFor(() => expect(atZero()).toBe(2), { timeout: 10_000, interval: 20 });
    // A PDF that cannot finish (2^49 draws) runs until its 3 s limit: its replacement does not wait
    // for it, so its process and two spares are there before it ends.
    let ended = false;
    const long = runExtraction({ kind: 'pdf', bytes: exponentialFormsPdf(50) }, { ...DEFAULT_EXTRACTION_LIMITS, timeoutMs: 3_000 });
    void long.finally(() => (ended = true));
    await vi.waitFor(() => expect(atZero()).toBe(3), { timeout: 2_500, interval: 20 });
    expect(ended).toBe(false);
    expect(await long).toMatchObject({ ok: false, reason: 'limits' });
    await vi.waitFor(() => expect(atZero()).toBe(2), { timeout: 10_000, interval: 20 });
  });

  it('a cancelled request leaves the queue, and one being extracted has its process killed', { timeout: 120_000 }, async () => {
    const org = await api.newOrg();
    await settle();
    const running = new AbortController();
    const waiting = new AbortController();
    const first = upload(org, 'grande', LARGE_CSV, running.signal).catch(() => null);
    await vi.waitFor(() => expect(slots().state).toEqual({ running: 1, waiting: 0 }), { timeout: 20_000, interval: 20 });
    // The organisation's second upload waits for its admission.
    const second = upload(org, 'outro', MEDIUM_CSV, waiting.signal).catch(() => null);
    await vi.waitFor(() => expect(admitted().state).toEqual({ running: 1, waiting: 1 }), { timeout: 20_000, interval: 20 });
    waiting.abort();
    await vi.waitFor(() => expect(admitted().state).toEqual({ running: 1, waiting: 0 }), { timeout: 2_000, interval: 20 });
    const cancelled = Date.now();
    running.abort();
    // The slot is released once the extraction process has exited: killed, not left to finish.
    await settle();
    expect(Date.now() - cancelled).toBeLessThan(1_500);
    await Promise.all([first, second]);
    const items = await api.rest('GET', '/backend/knowledge', { key: org.key });
    expect(items.body).toEqual([]);
  });
});

describe('a file that waits too long for its turn', () => {
  const short = useTestApp({ EXTRACT_CONCURRENCY: '1', EXTRACT_WAIT_MS: '100' });

  it('gets 503 with Retry-After, in the bare style', { timeout: 120_000 }, async () => {
    const org = await short.newOrg();
    const auth = { authorization: `Bearer ${org.key}` };
    const send = (name: string) =>
      short.raw('/backend/knowledge', { method: 'POST', headers: auth, body: form({ name }, ['file', `${name}.csv`, MEDIUM_CSV]) });
    // The only slot is held (by another organisation) for as long as the test needs: a file racing
    // against a real extraction's length would make the wait, and so the test, depend on the machine.
    const release = await extractionSlots(short.config).acquire('another-organisation');
    let late: Response;
    try {
      late = await send('segundo');
    } finally {
      release();
    }
    expect(late.status).toBe(503);
    expect(Number(late.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await late.json()).toEqual({ code: 'ERR_SERVICE_UNAVAILABLE', message: expect.any(String), retry_after: expect.any(Number) });
    // Once the slot is free, the same file is extracted.
    expect((await send('primeiro')).status).toBe(201);
  });

  it('small plain text needs no turn: read while every slot is taken, where a file to parse waits', { timeout: 120_000 }, async () => {
    const org = await short.newOrg();
    const CONTACTS = 'nome;telefone\r\nAna;+5511987650001\r\n';
    const send = (filename: string, content: string) =>
      short.raw('/backend/knowledge', {
        method: 'POST',
        headers: { authorization: `Bearer ${org.key}` },
        body: form({ name: filename }, ['file', filename, content]),
      });
    const release = await extractionSlots(short.config).acquire('another-organisation');
    let csv: Response;
    let md: Response;
    let largeText: Response;
    try {
      csv = await send('contatos.csv', CONTACTS);
      md = await send('guia.md', '# Guia\n');
      // Past IN_SERVER_TEXT_BYTES plain text goes to a process too.
      largeText = await send('grande.txt', 'a'.repeat(IN_SERVER_TEXT_BYTES + 1));
    } finally {
      release();
    }
    expect(csv.status).toBe(201);
    // Normalised as the process would: Unix line ends, nothing else changed.
    expect(await csv.json()).toMatchObject({
      content: 'nome;telefone\nAna;+5511987650001',
      file_type: 'text/csv',
      file_size: CONTACTS.length,
    });
    expect([md.status, largeText.status]).toEqual([503, 503]);
    // A small text file that is not UTF-8 is refused as before, without a process.
    const latin1 = await short.raw('/backend/knowledge', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}` },
      body: form({ name: 'x' }, ['file', 'x.txt', new Uint8Array([0x6f, 0xe7, 0x61])]),
    });
    expect(latin1.status).toBe(400);
  });

  it(
    'an upload whose organisation’s previous one holds its admission gets 503 before its body is read; another organisation’s is served',
    { timeout: 120_000 },
    async () => {
      const a = await short.newOrg('A');
      const b = await short.newOrg('B');
      const release = await uploadAdmission(short.config).acquire(a.tenantId);
      let late: Response;
      let other: Response;
      try {
        // A body that never ends: read, it would hold the request until the body deadline (408).
        const endless = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
        const headers = { authorization: `Bearer ${a.key}`, 'content-type': 'multipart/form-data; boundary=x' };
        late = await short.raw('/backend/knowledge', { method: 'POST', headers, body: endless, duplex: 'half' } as RequestInit);
        other = await short.raw('/backend/knowledge', {
          method: 'POST',
          headers: { authorization: `Bearer ${b.key}` },
          body: form({ name: 'b' }, ['file', 'b.csv', 'nome\nAna\n']),
        });
      } finally {
        release();
      }
      expect(late.status).toBe(503);
      expect(Number(late.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await late.json()).toEqual({ code: 'ERR_SERVICE_UNAVAILABLE', message: expect.any(String), retry_after: expect.any(Number) });
      expect(other.status).toBe(201);
    },
  );
});
