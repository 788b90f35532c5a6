// An extraction process may read the next file of the organisation whose file it just read (launcher.mjs,
// "warm"): starting Node was most of what a small file cost, about 1.3 cores for one organisation sending
// Markdown files one after another on the bench machine. What must hold: a process never reads two
// organisations' files (nor a file with no organisation), it is not kept after a refusal or a heavy
// parser's file, nor at another priority, and idle ones are bounded in number and time.
import os from 'node:os';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_EXTRACTION_LIMITS,
  launcherThread,
  runExtraction,
  type ExtractionRun,
} from '../../src/domains/knowledge/extract/run-child.js';
import type { ExtractionInput } from '../../src/domains/knowledge/extract/child/main.mjs';
import { useTestApp, type Org } from '../helpers/app.js';
import { extractionProcessesOf, form } from './helpers.js';

const markdown = (text: string): ExtractionInput => ({ kind: 'markdown', bytes: Buffer.from(`# ${text}\n`) });

/** The file's outcome and the pid of the process that read it. */
async function read(input: ExtractionInput, run: ExtractionRun = {}) {
  let pid = 0;
  const outcome = await runExtraction(input, DEFAULT_EXTRACTION_LIMITS, { ...run, onProcess: (p) => (pid = p) });
  return { outcome, pid };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A launcher of its own (idle processes kept 1.5 s unless told), so no earlier test's processes are counted. */
async function freshLauncher(warmIdleMs = 1_500) {
  await launcherThread().terminate();
  await vi.waitFor(() => expect(extractionProcessesOf()).toEqual([]), { timeout: 10_000, interval: 20 });
  launcherThread({ warmIdleMs });
}

describe('extraction processes kept warm for an organisation', () => {
  afterAll(() => launcherThread().terminate());

  it('reads an organisation’s next small file in the same process, and never another organisation’s', { timeout: 60_000 }, async () => {
    // Idle processes kept 30 s: under CI load the four files before the last check took over 1.5 s, and
    // A1's process had ended as idle (getPriority: ESRCH) before it was checked.
    await freshLauncher(30_000);
    const a1 = await read(markdown('A1'), { owner: 'org-a' });
    expect(a1.outcome).toEqual({ ok: true, text: 'A1' });
    const a2 = await read(markdown('A2'), { owner: 'org-a' });
    expect(a2).toEqual({ outcome: { ok: true, text: 'A2' }, pid: a1.pid });
    const b1 = await read(markdown('B1'), { owner: 'org-b' });
    expect(b1.outcome).toEqual({ ok: true, text: 'B1' });
    expect(b1.pid).not.toBe(a1.pid);
    // A file with no organisation takes neither, and its process is not kept.
    const none = await read(markdown('N'));
    expect([a1.pid, b1.pid]).not.toContain(none.pid);
    await vi.waitFor(() => expect(alive(none.pid)).toBe(false), { timeout: 5_000, interval: 20 });
    // The same organisation at another priority (flooding: nice 19) gets a process at that priority.
    const low = await read(markdown('A3'), { owner: 'org-a', niceness: 19 });
    expect(low.pid).not.toBe(a1.pid);
    expect(os.getPriority(low.pid)).toBe(19);
    expect(os.getPriority(a1.pid)).toBe(0);
    const b2 = await read(markdown('B2'), { owner: 'org-b' });
    expect(b2.pid).toBe(b1.pid);
    // Each kept process's text is its own file's: nothing of the file before.
    expect((await read(markdown('A4'), { owner: 'org-a' })).outcome).toEqual({ ok: true, text: 'A4' });
  });

  it('ends the process after a refused file or a heavy parser’s file, and after its idle time', { timeout: 60_000 }, async () => {
    await freshLauncher();
    const first = await read(markdown('C1'), { owner: 'org-c' });
    const refused = await read({ kind: 'pdf', bytes: Buffer.from('%PDF-1.7\nisto não é um PDF de verdade') }, { owner: 'org-c' });
    expect(refused.outcome).toMatchObject({ ok: false, reason: 'unreadable' });
    // The PDF went to the organisation's kept process (any small or large kind may), which is then ended.
    expect(refused.pid).toBe(first.pid);
    // The next file at once (well within the idle time) gets another process; the refused one's is gone.
    const next = await read(markdown('C2'), { owner: 'org-c' });
    expect(next.outcome).toEqual({ ok: true, text: 'C2' });
    expect(next.pid).not.toBe(first.pid);
    expect(alive(first.pid)).toBe(false);
    // A PDF read without fault: pdf.js is not a small parser, so its process is not kept either.
    const doc = await PDFDocument.create();
    doc.addPage([595, 842]).drawText('Prazo de 30 dias', { x: 50, y: 780, size: 12, font: await doc.embedFont(StandardFonts.Helvetica) });
    const pdf = await read({ kind: 'pdf', bytes: await doc.save() }, { owner: 'org-c' });
    expect(pdf).toEqual({ outcome: { ok: true, text: 'Prazo de 30 dias' }, pid: next.pid });
    const last = await read(markdown('C3'), { owner: 'org-c' });
    expect(last.pid).not.toBe(next.pid);
    expect(alive(next.pid)).toBe(false);
    // Idle past its time (1.5 s for this launcher, 10 s by default): ended.
    await vi.waitFor(() => expect(alive(last.pid)).toBe(false), { timeout: 6_000, interval: 50 });
    const after = await read(markdown('C4'), { owner: 'org-c' });
    expect(after.pid).not.toBe(last.pid);
  });

  it('keeps at most eight idle, the least recently used ended first', { timeout: 60_000 }, async () => {
    // Idle for 30 s: with 1.5 s, ten files read one after another on a loaded machine (CI) outlasted the
    // first ones' idle time, and every process had ended before the count.
    await freshLauncher(30_000);
    const pids: number[] = [];
    for (let i = 0; i < 10; i++) pids.push((await read(markdown(`D${i}`), { owner: `org-d${i}` })).pid);
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual(pids.slice(2)), { timeout: 5_000, interval: 20 });
    // Eight kept and the two spares at the server's priority waiting.
    await vi.waitFor(() => expect(extractionProcessesOf()).toHaveLength(10), { timeout: 5_000, interval: 20 });
  });
});

describe('over HTTP', () => {
  const api = useTestApp({ EXTRACT_CONCURRENCY: '2' });
  const upload = async (org: Org, name: string) => {
    const body = form({ name }, ['file', `${name}.md`, `# ${name}\n\nTexto de ${name}.\n`]);
    const r = await api.raw('/backend/knowledge', { method: 'POST', headers: { authorization: `Bearer ${org.key}` }, body });
    expect(r.status).toBe(201);
    // Each answer holds its own file's text, nothing of the file the process read before.
    expect(((await r.json()) as { content: string }).content).toBe(`${name}\n\nTexto de ${name}.`);
  };

  it('each organisation’s Markdown files after its first start no process: its own process reads them', { timeout: 60_000 }, async () => {
    await freshLauncher();
    const [a, b] = [await api.newOrg('Warm A'), await api.newOrg('Warm B')];
    await upload(a, 'a1');
    await upload(b, 'b1');
    // Both organisations' processes kept, the spares refilled.
    await vi.waitFor(() => expect(extractionProcessesOf()).toHaveLength(4), { timeout: 5_000, interval: 20 });
    const before = extractionProcessesOf().sort();
    for (let i = 2; i < 6; i++) {
      await upload(a, `a${i}`);
      await upload(b, `b${i}`);
    }
    expect(extractionProcessesOf().sort()).toEqual(before);
  });
});
