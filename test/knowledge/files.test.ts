// Knowledge items from files, over HTTP multipart: one request per accepted type (files written by
// libraries in the test), the text indexed for search, replacement of the file and of the typed text,
// and the refusals (extension, content that does not match it, over 10 MB, hostile files) that change
// nothing.
import ExcelJS from 'exceljs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
// Writing a trusted fixture only; the server reads XLS with SheetJS inside its extraction process.
import * as XLSX from '@e965/xlsx';
import { describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES } from '../../src/config.js';
import { useTestApp, type Org } from '../helpers/app.js';
import { ERR, form, knowledgeRows, makeItem } from './helpers.js';
import { flateBombPdf, mergeBombXlsx, selfReferencingPdf, zipBombXlsx } from './hostile-files.js';

const api = useTestApp();

async function pdf(lines: string[]): Promise<Uint8Array<ArrayBuffer>> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 20, size: 12, font }));
  return new Uint8Array(await doc.save());
}

async function xlsx(rows: unknown[][]): Promise<Uint8Array<ArrayBuffer>> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Preços');
  for (const row of rows) sheet.addRow(row);
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

function xls(rows: unknown[][]): Uint8Array<ArrayBuffer> {
  const workbook = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(workbook, XLSX.utils.aoa_to_sheet(rows), 'Clientes');
  return new Uint8Array(XLSX.write(workbook, { bookType: 'biff8', type: 'buffer' }));
}

async function upload(org: Org, fileName: string, bytes: BlobPart, fields: Record<string, string> = { name: fileName }) {
  return api.rest('POST', '/backend/knowledge', { key: org.key, body: form(fields, ['file', fileName, bytes]) });
}

const size = (bytes: BlobPart) => new Blob([bytes]).size;

describe('knowledge files over multipart', () => {
  it('a long text file (past 64 KB, accents and emoji) is stored and answered exactly: POST, GET, GraphQL and search agree', async () => {
    const org = await api.newOrg();
    // Long text is written as UTF-8 bytes (db/direct.ts), moved to the extraction rather than copied,
    // not read back after the write (knowledge/items.ts) and answered as bytes (http/responses.ts):
    // quotes and backslashes, which JSON escapes, included.
    const line = (i: number) => `${i};Orçamento 🚀 São Paulo;"ação"\tçÇ;C:\\pasta\\日本語\n`;
    const text = Array.from({ length: 3_000 }, (_, i) => line(i)).join('');
    expect(Buffer.byteLength(text)).toBeGreaterThan(128 * 1024);
    const expected = text.trim();
    const created = await upload(org, 'orcamentos.csv', text);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ content: expected, file_size: Buffer.byteLength(text), file_type: 'text/csv' });
    const read = await api.rest('GET', `/backend/knowledge/${created.body.id}`, { key: org.key });
    expect(read.body).toEqual(created.body);
    const graph = await api.raw('/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($id: UUID!) { knowledgeItem(id: $id) { id content } }', variables: { id: created.body.id } }),
    });
    expect(await graph.json()).toEqual({ data: { knowledgeItem: { id: created.body.id, content: expected } } });
    // The index was built from the stored text (unaccented: "orcamento" finds "Orçamento").
    const hits = await api.rest('GET', '/backend/knowledge/search?q=orcamento', { key: org.key });
    expect(hits.body.map((h: { item: { id: string } }) => h.item.id)).toEqual([created.body.id]);
    // A file replacing it: the answer carries the new text, and so does the next read.
    const replaced = await api.rest('PUT', `/backend/knowledge/${created.body.id}`, {
      key: org.key,
      body: form({}, ['file', 'novo.csv', text.replaceAll('Orçamento', 'Pedido')]),
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.content).toBe(expected.replaceAll('Orçamento', 'Pedido'));
    expect((await api.rest('GET', `/backend/knowledge/${created.body.id}`, { key: org.key })).body).toEqual(replaced.body);
    // Typed text and a long file in one item: the answer's content is both, as the next read says.
    const both = await upload(org, 'orcamentos.csv', text, { name: 'Ambos', content: 'Digitado "à mão" \\ 🚀' });
    expect(both.status).toBe(201);
    expect(both.body.content).toBe(`Digitado "à mão" \\ 🚀\n\n${expected}`);
    expect((await api.rest('GET', `/backend/knowledge/${both.body.id}`, { key: org.key })).body).toEqual(both.body);
  });

  it('accepts every type: the text extracted, file_name, file_type and file_size reported, the text searchable', async () => {
    const org = await api.newOrg();
    const cases: [string, BlobPart, string, string][] = [
      ['nota.txt', 'Atendimento   das 9h às 18h.\r\n', 'Atendimento das 9h às 18h.', 'text/plain'],
      ['faq.md', '# Perguntas\n\nPagamos via **pix**.', 'Perguntas\n\nPagamos via pix.', 'text/markdown'],
      [
        'guia.mdx',
        'import X from \'./x\'\n\n# Guia\n\n<Aviso tipo="a">Desligue o aparelho.</Aviso>',
        'Guia\n\nDesligue o aparelho.',
        'text/mdx',
      ],
      ['leiame.rst', 'Título\n======\n\nTexto reestruturado.\n', 'Título\n======\n\nTexto reestruturado.', 'text/x-rst'],
      ['manual.adoc', '= Manual\n\nParágrafo asciidoc.\n', '= Manual\n\nParágrafo asciidoc.', 'text/asciidoc'],
      [
        'pagina.html',
        '<html><head><style>p { color: red }</style><script>var segredo = 1;</script></head><body><h1>Loja</h1><p>Entrega expressa.</p></body></html>',
        'Loja\n\nEntrega expressa.',
        'text/html',
      ],
      [
        'politica.pdf',
        await pdf(['Política de reembolso', 'Prazo de 30 dias.']),
        'Política de reembolso\nPrazo de 30 dias.',
        'application/pdf',
      ],
      [
        'precos.xlsx',
        await xlsx([
          ['Produto', 'Preço'],
          ['Plano Pro', 199.9],
        ]),
        'Preços\nProduto\tPreço\nPlano Pro\t199.9',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      ],
      [
        'clientes.xls',
        xls([
          ['Cliente', 'Valor'],
          ['João', 2750.5],
        ]),
        'Clientes\nCliente\tValor\nJoão\t2750.5',
        'application/vnd.ms-excel',
      ],
      ['tabela.csv', 'produto,preço\nPro,199\n', 'produto,preço\nPro,199', 'text/csv'],
    ];
    for (const [fileName, bytes, text, mimeType] of cases) {
      const r = await upload(org, fileName, bytes);
      expect(r.status, `${fileName}: ${JSON.stringify(r.body)}`).toBe(201);
      expect(r.body).toMatchObject({ name: fileName, content: text, file_name: fileName, file_type: mimeType, file_size: size(bytes) });
      expect(r.body.content).not.toMatch(/segredo|color/);
    }
    const found = async (q: string) =>
      (await api.rest('GET', `/backend/knowledge/search?q=${encodeURIComponent(q)}`, { key: org.key })).body.map((h: any) => h.item.name);
    expect(await found('reembolso')).toEqual(['politica.pdf']);
    expect(await found('joao')).toEqual(['clientes.xls']);
    expect(await found('"plano pro"')).toEqual(['precos.xlsx']);
    expect(await found('expressa')).toEqual(['pagina.html']);
    expect(await found('segredo')).toEqual([]);
  });

  it('content is the typed text then the extracted text; a new file replaces only the extracted part, new content only the typed part', async () => {
    const org = await api.newOrg();
    const created = await upload(org, 'v1.txt', 'Tabela antiga de fretes.', { name: 'Fretes', content: 'Leia com atenção.' });
    expect(created.body).toMatchObject({ content: 'Leia com atenção.\n\nTabela antiga de fretes.', file_name: 'v1.txt' });
    const id = created.body.id;

    const replaced = await api.rest('PUT', `/backend/knowledge/${id}`, {
      key: org.key,
      body: form({}, ['file', 'v2.md', '# Tabela nova\n\nFrete grátis.']),
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      name: 'Fretes',
      content: 'Leia com atenção.\n\nTabela nova\n\nFrete grátis.',
      file_name: 'v2.md',
      file_type: 'text/markdown',
      file_size: size('# Tabela nova\n\nFrete grátis.'),
    });
    const search = async (q: string) => (await api.rest('GET', `/backend/knowledge/search?q=${q}`, { key: org.key })).body.length;
    expect(await search('antiga')).toBe(0);
    expect(await search('gratis')).toBe(1);

    const typed = await api.rest('PUT', `/backend/knowledge/${id}`, { key: org.key, body: { content: 'Novo aviso.' } });
    expect(typed.body).toMatchObject({ content: 'Novo aviso.\n\nTabela nova\n\nFrete grátis.', file_name: 'v2.md' });
    const noTyped = await api.rest('PUT', `/backend/knowledge/${id}`, { key: org.key, body: form({ content: '' }) });
    expect(noTyped.body.content).toBe('Tabela nova\n\nFrete grátis.');

    // A JSON item gains a file; a form's empty file part is no file.
    const plain = await makeItem(api, org, { name: 'Sem arquivo', content: 'Só texto.' });
    const gained = await api.rest('PUT', `/backend/knowledge/${plain.id}`, {
      key: org.key,
      body: form({ name: 'Com arquivo' }, ['file', 'extra.csv', 'a,b\n1,2']),
    });
    expect(gained.body).toMatchObject({
      name: 'Com arquivo',
      content: 'Só texto.\n\na,b\n1,2',
      file_name: 'extra.csv',
      file_type: 'text/csv',
      file_size: 7,
    });
    // What a browser sends for a file input left empty (FormData would leave the filename out).
    const emptyPart = await api.raw(`/backend/knowledge/${plain.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'multipart/form-data; boundary=b' },
      body:
        '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nIgual\r\n' +
        '--b\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--b--\r\n',
    });
    expect(emptyPart.status).toBe(200);
    expect(await emptyPart.json()).toMatchObject({ name: 'Igual', file_name: 'extra.csv', content: 'Só texto.\n\na,b\n1,2' });
  });

  it('refuses an unaccepted extension, content that does not match it, and a file over 10 MB (400); nothing changes', async () => {
    const org = await api.newOrg();
    const item = (await upload(org, 'original.txt', 'Texto original.', { name: 'Original' })).body;
    const before = await knowledgeRows(api, org.tenantId);
    const refusals: [string, BlobPart][] = [
      ['contrato.docx', 'PK\u0003\u0004'],
      ['script.exe', 'MZ'],
      ['sem-extensao', 'texto'],
      ['falso.pdf', 'isto não é um PDF'],
      ['falsa.xlsx', await pdf(['PDF disfarçado'])],
      ['falsa.xls', 'a,b\n1,2'],
      ['binario.txt', new Uint8Array([0x68, 0x00, 0x69])],
      ['grande.txt', new Uint8Array(MAX_FILE_BYTES + 1).fill(0x61)],
    ];
    for (const [fileName, bytes] of refusals) {
      const created = await upload(org, fileName, bytes);
      expect(created.status, `POST ${fileName}`).toBe(400);
      expect(created.body).toEqual(ERR('ERR_INVALID_INPUT'));
      const updated = await api.rest('PUT', `/backend/knowledge/${item.id}`, {
        key: org.key,
        body: form({ name: 'mudou' }, ['file', fileName, bytes]),
      });
      expect(updated.status, `PUT ${fileName}`).toBe(400);
      expect(updated.body).toEqual(ERR('ERR_INVALID_INPUT'));
    }
    expect(await knowledgeRows(api, org.tenantId)).toEqual(before);

    // Exactly 10 MB is accepted (the spaces collapse, so the text stays short).
    const tenMb = new Uint8Array(MAX_FILE_BYTES).fill(0x20);
    tenMb.set(Buffer.from('limite exato'));
    const atLimit = await upload(org, 'limite.txt', tenMb);
    expect(atLimit.status).toBe(201);
    expect(atLimit.body).toMatchObject({ content: 'limite exato', file_size: MAX_FILE_BYTES });
  });

  it('hostile files: each a 400, nothing stored, while the server answers other requests during the extraction', async () => {
    const org = await api.newOrg();
    const item = (await upload(org, 'original.txt', 'Texto original.', { name: 'Original' })).body;
    const before = await knowledgeRows(api, org.tenantId);
    // [file, bytes, whether its extraction lasts long enough to expect answers while it runs: the heap
    // and memory limits take seconds to reach; the others are refused within a fraction of one]
    const hostile: [string, Buffer, boolean][] = [
      ['bomba.xlsx', zipBombXlsx(), false],
      ['mentirosa.xlsx', zipBombXlsx({ declaredSheetSize: 4096 }), false],
      ['mescla.xlsx', mergeBombXlsx(), true],
      ['ciclo.pdf', selfReferencingPdf(), false],
      ['inflada.pdf', flateBombPdf(), true],
    ];
    for (const [fileName, buffer, slow] of hostile) {
      const bytes = new Uint8Array(buffer);
      let extracting = true;
      const sent = (
        fileName.endsWith('.pdf')
          ? api.rest('PUT', `/backend/knowledge/${item.id}`, { key: org.key, body: form({ name: 'mudou' }, ['file', fileName, bytes]) })
          : upload(org, fileName, bytes)
      ).finally(() => (extracting = false));
      let answeredWhileExtracting = 0;
      while (extracting) {
        const other = await api.rest('GET', '/backend/assistants', { key: org.key });
        expect(other.status).toBe(200);
        if (extracting) answeredWhileExtracting++;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const r = await sent;
      expect(r.status, fileName).toBe(400);
      expect(r.body).toEqual(ERR('ERR_INVALID_INPUT'));
      if (slow) expect(answeredWhileExtracting, fileName).toBeGreaterThan(0);
    }
    expect(await knowledgeRows(api, org.tenantId)).toEqual(before);
  });

  it('a file for an unknown item is 404 before any extraction; two file parts are 400; operators cannot upload', async () => {
    const org = await api.newOrg();
    const unknown = await api.rest('PUT', '/backend/knowledge/00000000-0000-4000-8000-000000000000', {
      key: org.key,
      body: form({}, ['file', 'falso.pdf', 'não é PDF']),
    });
    expect(unknown.status).toBe(404);
    const two = form({ name: 'Dois' }, ['file', 'a.txt', 'a']);
    two.append('file', new File(['b'], 'b.txt'));
    expect((await api.rest('POST', '/backend/knowledge', { key: org.key, body: two })).status).toBe(400);
    const operator = await api.keyFor(org, 'operator');
    const r = await api.rest('POST', '/backend/knowledge', { key: operator, body: form({ name: 'x' }, ['file', 'a.txt', 'a']) });
    expect(r.status).toBe(403);
    expect((await knowledgeRows(api, org.tenantId)).items).toEqual([]);
  });
});
