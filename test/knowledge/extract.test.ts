// Text extraction for knowledge files: real files of every accepted type, written by libraries in the
// test, and the refusals, hostile files included (zip bombs, PDFs that loop or explode, a spreadsheet
// that fills the heap): each a 400 INVALID_INPUT, its extraction process discarded, while this process
// (the server's) keeps answering HTTP and stays small.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
// Writing a trusted fixture only; the server reads XLS with SheetJS inside the extraction process alone.
import * as XLSX from '@e965/xlsx';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { MAX_FILE_BYTES } from '../../src/config.js';
import { extractText, MAX_TEXT_CHARS } from '../../src/domains/knowledge/extract/index.js';
import { DEFAULT_EXTRACTION_LIMITS, launcherThread, type ExtractionLimits } from '../../src/domains/knowledge/extract/run-child.js';
import { normalizeText } from '../../src/domains/knowledge/extract/child/normalize.mjs';
import { currentBundle } from '../../src/domains/knowledge/extract/child-bundle.mjs';
import { EXTRACTION_SCRIPT, extractionProcessesOf } from './helpers.js';
import { buildXlsx, buildZip, exponentialFormsPdf, flateBombPdf, mergeBombXlsx, selfReferencingPdf, zipBombXlsx } from './hostile-files.js';

const MB = 1024 * 1024;

type Refused = AppError & { cause: { reason: string; detail?: string } };

async function refusal(filename: string, bytes: Uint8Array, limits?: Partial<ExtractionLimits>): Promise<Refused> {
  const error = await extractText({ filename, bytes }, { ...DEFAULT_EXTRACTION_LIMITS, ...limits }).then(
    (result) => result,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).kind).toBe('INVALID_INPUT');
  expect((error as AppError).status).toBe(400);
  return error as Refused;
}

/**
 * Runs the work while a local HTTP server, standing in for Funil's, is asked for a response every 100 ms
 * (the first request leaves with the work). Returns what the checks below need: how many requests were
 * answered, the CPU time this process spent while the work ran, and how far its memory grew. Wall-clock
 * answer times are only printed: on a machine shared with other suites they grow with the load, not with
 * the file, and an assertion on them flaked.
 */
async function whileServing<T>(label: string, work: () => Promise<T>) {
  const server = http.createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await (await fetch(url)).text(); // the first fetch loads the HTTP client: not part of the measure
  const rssAtStart = process.memoryUsage.rss();
  let peakRssGrowth = 0;
  const sampler = setInterval(() => (peakRssGrowth = Math.max(peakRssGrowth, process.memoryUsage.rss() - rssAtStart)), 20);
  const latencies: number[] = [];
  let done = false;
  const pinging = (async () => {
    while (!done) {
      const sent = performance.now();
      const response = await fetch(url);
      expect(await response.text()).toBe('ok');
      latencies.push(performance.now() - sent);
      await sleep(100);
    }
  })();
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  try {
    const result = await work();
    const cpu = process.cpuUsage(cpuAtStart);
    const report = {
      elapsedMs: Math.round(performance.now() - started),
      serverCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      peakRssGrowthMb: Math.round(peakRssGrowth / MB),
      requests: latencies.length,
      slowestAnswerMs: Math.round(Math.max(0, ...latencies)),
    };
    console.log(`[extract] ${label}: ${JSON.stringify(report)}, load average ${os.loadavg()[0].toFixed(1)}`);
    return { result, ...report };
  } finally {
    done = true;
    await pinging;
    clearInterval(sampler);
    server.closeAllConnections();
    server.close();
  }
}

/**
 * The server kept answering, within a second, however loaded the machine: every request was answered,
 * and this process spent under a second of CPU in all while the file was parsed elsewhere, so its event
 * loop was never busy for a second (parsing in-process, the files below take seconds of CPU each).
 */
function expectServerAnswering(watch: { requests: number; serverCpuMs: number; peakRssGrowthMb: number }) {
  expect(watch.requests).toBeGreaterThan(0);
  expect(watch.serverCpuMs).toBeLessThan(1000);
  expect(watch.peakRssGrowthMb).toBeLessThan(200);
}

describe('text of every accepted type', () => {
  it('PDF written by pdf-lib: each page in order, lines kept, accents intact', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const first = doc.addPage([595, 842]);
    first.drawText('Política de reembolso', { x: 50, y: 780, size: 18, font });
    first.drawText('Prazo de 30 dias para devolução.', { x: 50, y: 750, size: 12, font });
    const second = doc.addPage([595, 842]);
    second.drawText('Página dois: orçamento anual', { x: 50, y: 780, size: 12, font });
    const result = await extractText({ filename: 'politica.PDF', bytes: await doc.save() });
    expect(result).toEqual({
      text: 'Política de reembolso\nPrazo de 30 dias para devolução.\n\nPágina dois: orçamento anual',
      mimeType: 'application/pdf',
    });
  });

  it('XLSX written by exceljs: one block per sheet, one line per row, cells separated by tabs', async () => {
    const workbook = new ExcelJS.Workbook();
    const products = workbook.addWorksheet('Produtos');
    products.addRow(['Produto', 'Preço', 'Validade']);
    products.addRow(['Plano Pro', 199.9, new Date(Date.UTC(2025, 0, 31))]);
    products.addRow(['Consultoria\tpor hora', { formula: 'B2*2', result: 399.8 }, null, 'extra']);
    products.addRow([]);
    products.addRow([
      { richText: [{ text: 'Texto ' }, { text: 'rico', font: { bold: true } }] },
      { text: 'site', hyperlink: 'https://example.com' },
      new Date(Date.UTC(2025, 5, 1, 14, 30)),
    ]);
    workbook.addWorksheet('Observações').addRow(['Linha única']);
    const bytes = new Uint8Array(await workbook.xlsx.writeBuffer());
    expect(await extractText({ filename: 'catalogo.xlsx', bytes })).toEqual({
      text: [
        'Produtos',
        'Produto\tPreço\tValidade',
        'Plano Pro\t199.9\t2025-01-31',
        'Consultoria por hora\t399.8\t\textra',
        'Texto rico\tsite\t2025-06-01 14:30:00',
        '',
        'Observações',
        'Linha única',
      ].join('\n'),
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    });
  });

  it('XLS (BIFF8) written by SheetJS: the same layout, cells as Excel formats them', async () => {
    const workbook = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(
      workbook,
      XLSX.utils.aoa_to_sheet([
        ['Cliente', 'Valor'],
        ['Ana', 1500],
        ['João', 2750.5],
      ]),
      'Clientes',
    );
    XLSX.utils.book_append_sheet(workbook, XLSX.utils.aoa_to_sheet([['Nota'], [], ['Pagamento à vista']]), 'Notas');
    const bytes: Buffer = XLSX.write(workbook, { bookType: 'biff8', type: 'buffer' });
    expect(await extractText({ filename: 'clientes.xls', bytes })).toEqual({
      text: 'Clientes\nCliente\tValor\nAna\t1500\nJoão\t2750.5\n\nNotas\nNota\nPagamento à vista',
      mimeType: 'application/vnd.ms-excel',
    });
  });

  it('HTML: the visible text only, blocks on their own lines, table cells separated by tabs', async () => {
    const html = `<!doctype html>
<html><head><title>Título secreto</title><meta charset="utf-8"><style>body { color: red }</style>
<script>var segredo = "vazou";</script></head>
<body>
  <h1>Horário   de
  atendimento</h1>
  <p>Segunda a sexta, <b>9h</b> às 18h &amp; sábado<br>até 12h.</p>
  <script type="module">console.log('vazou')</script>
  <noscript>Ative o JavaScript</noscript>
  <template><p>modelo escondido</p></template>
  <div hidden>oculto</div><div style="display: none">também oculto</div>
  <!-- comentário -->
  <table><tr><th>Plano</th><th>Preço</th></tr><tr><td>Pro</td><td>R$ 199</td></tr></table>
  <ul><li>Um</li><li>Dois</li></ul>
  <pre>linha 1
  linha 2</pre>
</body></html>`;
    const { text, mimeType } = await extractText({ filename: 'pagina.html', bytes: Buffer.from(html) });
    expect(mimeType).toBe('text/html');
    expect(text).toBe(
      'Horário de atendimento\n\nSegunda a sexta, 9h às 18h & sábado\naté 12h.\n\nPlano\tPreço\nPro\tR$ 199\n\nUm\nDois\n\nlinha 1\nlinha 2',
    );
    for (const leaked of ['Título', 'color', 'segredo', 'vazou', 'JavaScript', 'modelo', 'oculto', 'comentário']) {
      expect(text).not.toContain(leaked);
    }
  });

  it('Markdown: readable text without markup; link text kept, URLs and raw HTML dropped', async () => {
    const md = [
      '# Perguntas frequentes',
      '',
      'Veja **todas** as _condições_ no [site](https://example.com) e use `cupom10`.  ',
      'Segunda linha.',
      '',
      '- Entrega em 2 dias',
      '- Troca grátis',
      '',
      '<div class="aviso">HTML cru</div>',
      '',
      '| Plano | Preço |',
      '| --- | --- |',
      '| Pro | 199 |',
      '',
      '```js',
      'const codigo = 1;',
      '```',
      '',
      '[ref]: https://example.com/ref',
    ].join('\n');
    expect(await extractText({ filename: 'faq.md', bytes: Buffer.from(md) })).toEqual({
      text:
        'Perguntas frequentes\n\nVeja todas as condições no site e use cupom10.\nSegunda linha.\n\n' +
        'Entrega em 2 dias\nTroca grátis\n\nPlano\tPreço\nPro\t199\n\nconst codigo = 1;',
      mimeType: 'text/markdown',
    });
  });

  it('MDX: import/export lines, JSX tags and {expressions} dropped; the text inside JSX kept', async () => {
    const mdx = [
      "import { Callout } from '../components/callout'",
      'export const meta = { title: "Oculto" }',
      '',
      '# Guia de {meta.title} instalação',
      '',
      '<Callout type="warning" data-secret="atributo">',
      '  Desligue o aparelho antes.',
      '</Callout>',
      '',
      'Texto com <Badge color="green">novo</Badge> e {1 + 1} fim.',
    ].join('\n');
    expect(await extractText({ filename: 'guia.mdx', bytes: Buffer.from(mdx) })).toEqual({
      text: 'Guia de instalação\n\nDesligue o aparelho antes.\n\nTexto com novo e fim.',
      mimeType: 'text/mdx',
    });
  });

  it('CSV, TXT, RST and ADOC as text: BOM dropped, line ends and spaces tidied, tabs kept', async () => {
    const cases: [string, string, string, string][] = [
      ['precos.csv', '\uFEFFproduto,preço\r\nPro,"199,90"\r\n', 'produto,preço\nPro,"199,90"', 'text/csv'],
      ['notas.txt', '  Olá,   mundo\t!\n\n\n\nfim  \n', 'Olá, mundo\t!\n\nfim', 'text/plain'],
      ['LEIAME.RST', 'Título\n======\n\nTexto *rst*.\n', 'Título\n======\n\nTexto *rst*.', 'text/x-rst'],
      ['manual.adoc', '= Manual\n\nParágrafo.\n', '= Manual\n\nParágrafo.', 'text/asciidoc'],
    ];
    for (const [filename, content, text, mimeType] of cases) {
      expect(await extractText({ filename, bytes: Buffer.from(content) })).toEqual({ text, mimeType });
    }
  });

  it('normalises every text: NUL and control characters, lone surrogates, line ends, space runs', () => {
    expect(normalizeText('\n a\u0000b\u0007 \uD800c\uDC00 \uD83D\uDE00\r\nx \u00A0\u2003 y\t \tz \r\r\r\rfim \n')).toBe(
      'ab c \uD83D\uDE00\nx y\t\tz\n\nfim',
    );
  });

  it('runs in its own process when the server itself runs under tsx (npm start), and keeps no process alive afterwards', () => {
    const script = path.join(os.tmpdir(), `funil-extract-${process.pid}.mts`);
    const entry = path.resolve('src/domains/knowledge/extract/index.ts');
    fs.writeFileSync(
      script,
      `import { extractText } from ${JSON.stringify(entry)};\n` +
        `const r = await extractText({ filename: 'a.md', bytes: Buffer.from('# Olá *tsx*') });\n` +
        `process.stdout.write(JSON.stringify(r));\n`,
    );
    try {
      const run = spawnSync(path.resolve('node_modules/.bin/tsx'), [script], { encoding: 'utf8', timeout: 30_000 });
      expect(run.stderr).toBe('');
      // It ended on its own: neither the launcher thread nor the spare process it keeps holds it open.
      expect(run.signal).toBeNull();
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ text: 'Olá tsx', mimeType: 'text/markdown' });
    } finally {
      fs.rmSync(script, { force: true });
    }
  });
});

describe('refusals', () => {
  it('refuses extensions outside the list, whatever the content', async () => {
    for (const filename of ['planilha.ods', 'doc.docx', 'script.exe', 'sem-extensao', 'notas.txt.zip', '.txt']) {
      const error = await refusal(filename, Buffer.from('texto'));
      expect(error.message).toContain('Extensão de arquivo não aceita');
      expect(error.message).toContain('.txt, .md, .mdx, .rst, .adoc, .html, .pdf, .xlsx, .xls, .csv');
    }
  });

  it('refuses content that does not match the extension', async () => {
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
    const zipWithoutWorkbook = buildZip([{ name: 'word/document.xml', content: [{ data: '<w:document/>' }] }]);
    const oleHeader = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    const cases: [string, Uint8Array, string][] = [
      ['falso.pdf', Buffer.from('Isto é texto, não um PDF.'), 'mismatch'],
      ['aleatorio.xlsx', random, 'mismatch'],
      ['zip-quebrado.xlsx', Buffer.concat([Buffer.from('PK\x03\x04'), random]), 'mismatch'],
      ['documento.xlsx', zipWithoutWorkbook, 'mismatch'],
      ['aleatorio.xls', random, 'mismatch'],
      ['planilha-nova.xls', zipWithoutWorkbook, 'mismatch'],
      ['ole-quebrado.xls', Buffer.concat([oleHeader, random]), 'unreadable'],
      ['pdf-quebrado.pdf', Buffer.from('%PDF-1.7\nisto não é um PDF de verdade'), 'unreadable'],
    ];
    for (const [filename, bytes, reason] of cases) {
      const error = await refusal(filename, bytes);
      if (reason === 'mismatch') expect(error.message).toBe(`O conteúdo do arquivo não corresponde à extensão ${path.extname(filename)}`);
      else expect(error.cause.reason).toBe('unreadable');
    }
  });

  it('refuses text files with NUL bytes or that are not UTF-8', async () => {
    for (const [filename, bytes] of [
      ['nulo.txt', Buffer.from('abc\u0000def')],
      ['nulo.md', Buffer.from('# a\u0000')],
      ['latin1.csv', Buffer.from('a,ação\n', 'latin1')],
      ['utf16.html', Buffer.from('\uFEFF<p>oi</p>', 'utf16le')],
    ] as const) {
      const error = await refusal(filename, bytes);
      expect(error.message).toBe(`O arquivo ${path.extname(filename)} deve ser texto UTF-8, sem bytes nulos`);
    }
  });

  it('refuses a file over 10 MB before reading it; 10 MB itself passes the size check', async () => {
    const error = await refusal('grande.pdf', Buffer.alloc(MAX_FILE_BYTES + 1, 0x20));
    expect(error.message).toBe('O arquivo excede o limite de 10 MB');
    // Exactly 10 MB is read (and then refused for its length, not its size).
    const atLimit = await refusal('limite.txt', Buffer.alloc(MAX_FILE_BYTES, 'a'));
    expect(atLimit.cause.reason).toBe('too_long');
  });

  it('refuses more than 2,000,000 characters of text; exactly 2,000,000 passes', async () => {
    const ok = await extractText({ filename: 'limite.txt', bytes: Buffer.from('é'.repeat(MAX_TEXT_CHARS)) });
    expect(ok.text.length).toBe(2_000_000);
    const error = await refusal('longo.txt', Buffer.from('é'.repeat(MAX_TEXT_CHARS + 1)));
    expect(error.message).toBe('O texto extraído do arquivo excede 2.000.000 caracteres');
  });
});

describe('hostile files: refused, the extraction process discarded, the server answering and small', () => {
  it('an XLSX that inflates to 1 GB and says so: refused from its declared sizes, nothing inflated', async () => {
    const bomb = zipBombXlsx();
    expect(bomb.length).toBeLessThan(1.1 * MB);
    const watch = await whileServing('xlsx zip bomb, honest sizes', () => refusal('bomba.xlsx', bomb));
    expect(watch.result.message).toBe('A planilha descompactada excede 50 MB');
    expect(watch.result.cause.detail).toMatch(/^declared 1073\d+ bytes$/);
    expectServerAnswering(watch);
  });

  it('an XLSX that inflates to 1 GB while declaring 4 KB: stopped at the first bytes over, streaming', async () => {
    const bomb = zipBombXlsx({ declaredSheetSize: 4096 });
    const watch = await whileServing('xlsx zip bomb, lying sizes', () => refusal('bomba.xlsx', bomb));
    expect(watch.result.cause.reason).toBe('inflated_too_large');
    expect(watch.result.cause.detail).toContain('too many bytes in the stream. expected 4096');
    expectServerAnswering(watch);
  });

  it('the same workbook, small, is read: the bombs above are refused for their size, not their shape', async () => {
    const small = buildXlsx('Bomba', [
      { data: '<row r="1"><c r="A1" t="inlineStr"><is><t>pequena</t></is></c><c r="B1"><v>42</v></c></row>' },
    ]);
    expect((await extractText({ filename: 'pequena.xlsx', bytes: small })).text).toBe('Bomba\npequena\t42');
  });

  it('a 2 KB XLSX whose merged range covers the whole sheet: the heap limit ends the extraction process, not the server', async () => {
    const bomb = mergeBombXlsx();
    expect(bomb.length).toBeLessThan(4096);
    const watch = await whileServing('xlsx merge bomb (heap limit 128 MB)', () =>
      refusal('mescla.xlsx', bomb, { maxOldGenerationSizeMb: 128, timeoutMs: 120_000 }),
    );
    expect(watch.result.message).toBe('A extração do texto do arquivo excedeu o limite de memória ou de tempo');
    // V8's own last words: a process at its heap limit is ended by V8, whatever the allocation.
    expect(watch.result.cause.detail).toMatch(/heap out of memory/);
    expectServerAnswering(watch);
  });

  it('a PDF whose page tree contains itself: refused', async () => {
    const watch = await whileServing('pdf self-referencing page tree', () => refusal('ciclo.pdf', selfReferencingPdf()));
    expect(watch.result.cause).toEqual({ reason: 'unreadable', detail: expect.stringContaining('circular reference') });
    expectServerAnswering(watch);
  });

  it('a 9 KB PDF whose forms draw each other 2^49 times: killed at the time limit', async () => {
    // 2^49 draws cannot end within the limit on any machine: the outcome is the time limit, however
    // loaded the machine (2^29 draws, which pdf.js can finish, made an earlier version of this test flaky).
    const loop = exponentialFormsPdf(50);
    expect(loop.length).toBeLessThan(10_000);
    const watch = await whileServing('pdf exponential forms (time limit 2 s)', () => refusal('formas.pdf', loop, { timeoutMs: 2000 }));
    expect(watch.result.message).toBe('A extração do texto do arquivo excedeu o limite de memória ou de tempo');
    expect(watch.result.cause.detail).toBe('over 2000 ms');
    expectServerAnswering(watch);
  });

  it('a 1 MB PDF whose content stream inflates to 1 GB outside the heap: ended by the memory budget', async () => {
    const bomb = flateBombPdf();
    expect(bomb.length).toBeLessThan(1.1 * MB);
    const watch = await whileServing('pdf flate bomb (memory budget 384 MB)', () => refusal('inflada.pdf', bomb, { maxRssMb: 384 }));
    expect(watch.result.message).toBe('A extração do texto do arquivo excedeu o limite de memória ou de tempo');
    expect(watch.result.cause.detail).toMatch(/^memory \d+ MB, over the 384 MB budget \(killed by SIGKILL\)$/);
    expectServerAnswering(watch);
  });
});

describe('the extraction process', () => {
  it('where the launcher cannot watch its processes (no /proc or no setpriv), each watches its own memory', async () => {
    await launcherThread().terminate();
    launcherThread({ ownWatchdog: true });
    try {
      const error = await refusal('inflada.pdf', flateBombPdf(), { maxRssMb: 384 });
      expect(error.cause.detail).toMatch(/^memory \d+ MB, over the 384 MB budget \(killed by SIGKILL\)$/);
    } finally {
      await launcherThread().terminate(); // the next test gets a launcher that watches its processes
    }
  });

  it('runs the bundled code once it is built, keeps the build in use fresh, and never runs a bundle older than its sources', async () => {
    while (!currentBundle()) await sleep(50); // built by this file's first extraction, or before (bounded by the test's timeout)
    const bundle = currentBundle()!;
    expect(bundle).toMatch(EXTRACTION_SCRIPT);
    expect(bundle).toContain('/node_modules/.cache/funil-extract/');
    // A process started now runs it: the one parsing an endless PDF, seen from /proc.
    const endless = extractText(
      { filename: 'x.pdf', bytes: exponentialFormsPdf(50) },
      { ...DEFAULT_EXTRACTION_LIMITS, timeoutMs: 1500 },
    ).catch((error: Refused) => error.cause.detail);
    await sleep(500);
    const scripts = spawnSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout;
    expect(await endless).toBe('over 1500 ms');
    expect(scripts).toContain(bundle);
    // The build in use stays fresh: a later build deletes day-old builds other than its own, and a process
    // waiting as a spare loads a kind's parser only when its file comes. The next process started touches it.
    const dir = path.dirname(bundle);
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    fs.utimesSync(dir, twoDaysAgo, twoDaysAgo);
    expect((await extractText({ filename: 'fresco.md', bytes: Buffer.from('# Fresco\n') }, DEFAULT_EXTRACTION_LIMITS)).text).toContain(
      'Fresco',
    );
    await expect.poll(() => Date.now() - fs.statSync(dir).mtimeMs, { timeout: 5_000 }).toBeLessThan(60_000);
    // A source changed after the build: the bundle is no longer current (the next server builds anew).
    const source = path.resolve('src/domains/knowledge/extract/child/normalize.mjs');
    const { atime, mtime } = fs.statSync(source);
    fs.utimesSync(source, atime, new Date(mtime.getTime() + 1000));
    expect(currentBundle()).toBeUndefined();
  });

  it('a launcher thread that dies takes its extraction processes with it: none runs on without its time limit', async () => {
    const extractionProcesses = () => extractionProcessesOf();
    // An endless extraction (2^49 form draws) under a ten-minute limit, which only the launcher's timer enforces.
    const endless = extractText(
      { filename: 'x.pdf', bytes: exponentialFormsPdf(50) },
      { ...DEFAULT_EXTRACTION_LIMITS, timeoutMs: 600_000 },
    ).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    while (extractionProcesses().length === 0) await sleep(50);
    await sleep(500); // the file handed over, the process parsing
    const started = extractionProcesses();
    await launcherThread().terminate();
    expect(await endless).toContain('the extraction launcher exited');
    const running = (pid: number) =>
      !['', 'Z'].includes(
        spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
          .stdout.trim()
          .slice(0, 1),
      );
    while (started.some(running)) await sleep(50); // bounded by the test's timeout
    expect(started.filter(running)).toEqual([]);
    // The next file gets a new launcher.
    expect(await extractText({ filename: 'a.txt', bytes: Buffer.from('de novo') })).toEqual({ text: 'de novo', mimeType: 'text/plain' });
  });

  it.each([
    ['the kernel (setpriv)', false],
    ['its own watchdog thread', true],
  ])('an extraction process outlives neither its time limit nor its server, even one killed with SIGKILL: %s', async (_, ownWatchdog) => {
    const script = path.join(os.tmpdir(), `funil-orphan-${process.pid}.mts`);
    const entry = path.resolve('src/domains/knowledge/extract/index.ts');
    // An endless extraction (2^49 form draws) under a ten-minute limit.
    const pdfFile = path.join(os.tmpdir(), `funil-orphan-${process.pid}.pdf`);
    fs.writeFileSync(pdfFile, exponentialFormsPdf(50));
    fs.writeFileSync(
      script,
      `import fs from 'node:fs';\nimport { extractText } from ${JSON.stringify(entry)};\n` +
        `import { launcherThread } from ${JSON.stringify(path.resolve('src/domains/knowledge/extract/run-child.ts'))};\n` +
        `launcherThread({ ownWatchdog: ${ownWatchdog} });\n` +
        `await extractText({ filename: 'x.pdf', bytes: fs.readFileSync(${JSON.stringify(pdfFile)}) }, { timeoutMs: 600_000, maxRssMb: 768, maxOldGenerationSizeMb: 256 });\n`,
    );
    // Started as `npm start` starts the server: one node process with tsx's loader.
    const server = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'ignore', env: { ...process.env, LOG_LEVEL: 'silent' } });
    const ps = (...args: string[]) => spawnSync('ps', args, { encoding: 'utf8' }).stdout.trim();
    // Gone, or a zombie nobody has reaped yet (it runs no more).
    const running = (pid: number) => !['', 'Z'].includes(ps('-o', 'stat=', '-p', String(pid)).slice(0, 1));
    const children = () => extractionProcessesOf(server.pid);
    try {
      while (children().length === 0 && server.exitCode === null) await sleep(50);
      await sleep(1000); // the file handed over and being parsed, the spare started beside it
      // All of them: the one parsing (an idle spare would also end when its IPC channel closes).
      const extractions = children();
      expect(extractions.length).toBeGreaterThan(0);
      expect(extractions.every(running)).toBe(true);
      server.kill('SIGKILL');
      while (extractions.some(running)) await sleep(50); // bounded by the test's timeout
      expect(extractions.filter(running)).toEqual([]);
    } finally {
      server.kill('SIGKILL');
      fs.rmSync(script, { force: true });
      fs.rmSync(pdfFile, { force: true });
    }
  });
});
