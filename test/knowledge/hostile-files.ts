// Builders for the files the extraction tests feed in that no library writes on purpose: zips and PDFs
// put together byte by byte, so a test can make them inflate to a gigabyte while staying small on
// disk, lie about their sizes, or loop. Large contents are never held whole: a chunk is deflated once
// and its compressed bytes repeated (full flushes make the pieces independent), checksums combined.
import zlib from 'node:zlib';

/** Content given as pieces, each repeated `times` (default once). */
export type Pieces = { data: string | Buffer; times?: number }[];

interface Deflated {
  raw: Buffer; // raw deflate stream
  size: number;
  crc32: number;
  adler32: number;
}

const MOD_ADLER = 65521;

/** zlib's adler32_combine: the checksum of a+b from those of a and b and b's length. */
function combineAdler(a: number, b: number, lengthOfB: number): number {
  const rem = lengthOfB % MOD_ADLER;
  let sum1 = a & 0xffff;
  let sum2 = (rem * sum1) % MOD_ADLER;
  sum1 += (b & 0xffff) + MOD_ADLER - 1;
  sum2 += (a >>> 16) + (b >>> 16) + MOD_ADLER - rem;
  if (sum1 >= MOD_ADLER) sum1 -= MOD_ADLER;
  if (sum1 >= MOD_ADLER) sum1 -= MOD_ADLER;
  if (sum2 >= MOD_ADLER << 1) sum2 -= MOD_ADLER << 1;
  if (sum2 >= MOD_ADLER) sum2 -= MOD_ADLER;
  return (sum1 | (sum2 << 16)) >>> 0;
}

function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % MOD_ADLER;
    b = (b + a) % MOD_ADLER;
  }
  return ((b << 16) | a) >>> 0;
}

export function deflatePieces(pieces: Pieces): Deflated {
  const parts: Buffer[] = [];
  let size = 0;
  let crc = 0;
  let adler = 1;
  for (const piece of pieces) {
    const data = Buffer.from(piece.data);
    const compressed = zlib.deflateRawSync(data, { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
    const pieceAdler = adler32(data);
    for (let i = 0; i < (piece.times ?? 1); i++) {
      parts.push(compressed);
      crc = zlib.crc32(data, crc);
      adler = combineAdler(adler, pieceAdler, data.length);
      size += data.length;
    }
  }
  parts.push(zlib.deflateRawSync(Buffer.alloc(0))); // the final, empty block
  return { raw: Buffer.concat(parts), size, crc32: crc, adler32: adler };
}

export interface ZipEntry {
  name: string;
  content: Pieces;
  /** The uncompressed size written in the headers, when it should lie. */
  declaredSize?: number;
}

/** A plain zip (deflate, no zip64) of the entries. */
export function buildZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const { raw, size, crc32 } = deflatePieces(entry.content);
    const declared = entry.declaredSize ?? size;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc32, 14);
    local.writeUInt32LE(raw.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc32, 16);
    central.writeUInt32LE(raw.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, raw);
    centrals.push(central, name);
    offset += local.length + name.length + raw.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';

/**
 * A minimal but complete XLSX: one sheet, and optionally shared strings; the sheet's and the shared
 * strings' XML given as pieces so either can be made to inflate enormously.
 */
export function buildXlsx(
  sheetName: string,
  sheetData: Pieces,
  options: { sharedStrings?: Pieces; declaredSheetSize?: number } = {},
): Buffer {
  const xml = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
  const entries: ZipEntry[] = [
    {
      name: '[Content_Types].xml',
      content: [
        {
          data:
            xml +
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
            '<Default Extension="xml" ContentType="application/xml"/>' +
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
            (options.sharedStrings
              ? '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
              : '') +
            '</Types>',
        },
      ],
    },
    {
      name: '_rels/.rels',
      content: [
        {
          data: `${xml}<Relationships xmlns="${PACKAGE_REL_NS}"><Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
        },
      ],
    },
    {
      name: 'xl/workbook.xml',
      content: [
        {
          data: `${xml}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheets><sheet name="${sheetName}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
        },
      ],
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      content: [
        {
          data:
            `${xml}<Relationships xmlns="${PACKAGE_REL_NS}">` +
            `<Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>` +
            (options.sharedStrings ? `<Relationship Id="rId2" Type="${REL_NS}/sharedStrings" Target="sharedStrings.xml"/>` : '') +
            '</Relationships>',
        },
      ],
    },
  ];
  if (options.sharedStrings) {
    entries.push({
      name: 'xl/sharedStrings.xml',
      content: [{ data: `${xml}<sst xmlns="${MAIN_NS}">` }, ...options.sharedStrings, { data: '</sst>' }],
    });
  }
  entries.push({
    name: 'xl/worksheets/sheet1.xml',
    content: [{ data: `${xml}<worksheet xmlns="${MAIN_NS}"><sheetData>` }, ...sheetData, { data: '</sheetData></worksheet>' }],
    declaredSize: options.declaredSheetSize,
  });
  return buildZip(entries);
}

/** A zlib (FlateDecode) stream of the pieces. */
export function flateStream(pieces: Pieces): Buffer {
  const { raw, adler32 } = deflatePieces(pieces);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler32);
  return Buffer.concat([Buffer.from([0x78, 0xda]), raw, trailer]);
}

/** `<< dict /Length n >> stream … endstream` */
export function pdfStream(dict: string, data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]);
}

/** A PDF of the given objects, numbered from 1 in order; object 1 is the catalog. */
export function buildPdf(objects: (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    offsets.push(offset);
    parts.push(object);
    offset += object.length;
  });
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(Buffer.from(xref));
  return Buffer.concat(parts);
}

// The hostile files both the extraction tests and the HTTP tests send.
const MB = 1024 * 1024;
const PDF_CATALOG = '<< /Type /Catalog /Pages 2 0 R >>';

/** An XLSX of 1 MB whose sheet inflates to 1 GB; `declaredSheetSize` makes its headers lie. */
export function zipBombXlsx(options: { declaredSheetSize?: number } = {}): Buffer {
  return buildXlsx('Bomba', [{ data: ' '.repeat(MB), times: 1024 }], options);
}

/** A 2 KB XLSX with one merged range over the whole sheet: exceljs fills any heap with its cells. */
export function mergeBombXlsx(): Buffer {
  const mergeEverything =
    '<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row></sheetData>' +
    '<mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells><sheetData>';
  return buildXlsx('Mescla', [{ data: mergeEverything }]);
}

/** A PDF whose page tree contains itself. */
export function selfReferencingPdf(): Buffer {
  return buildPdf([PDF_CATALOG, '<< /Type /Pages /Kids [2 0 R] /Count 1 >>']);
}

/**
 * A PDF of a few KB whose page draws form `levels - 1`, each form k drawing form k - 1 twice, form 0
 * showing text: 2^(levels - 1) draws. pdf.js walks 2^30 in about 2.5 s on an idle machine; 2^40 ran
 * past a minute.
 */
export function exponentialFormsPdf(levels: number): Buffer {
  const formRef = (k: number) => `${5 + k} 0 R`;
  const objects: (string | Buffer)[] = [
    PDF_CATALOG,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X ${formRef(levels - 1)} >> >> /Contents 4 0 R >>`,
    pdfStream('', Buffer.from('/X Do')),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    pdfStream(
      '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>',
      Buffer.from('BT /F1 12 Tf (Loop) Tj ET'),
    ),
  ];
  for (let k = 1; k < levels; k++) {
    objects.push(
      pdfStream(
        `/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /A ${formRef(k - 1)} >> >>`,
        Buffer.from('/A Do /A Do'),
      ),
    );
  }
  return buildPdf(objects);
}

/** A 1 MB PDF whose content stream inflates to 1 GB. */
export function flateBombPdf(): Buffer {
  const content = flateStream([{ data: 'BT ' }, { data: ' '.repeat(MB), times: 1024 }, { data: ' ET' }]);
  return buildPdf([
    PDF_CATALOG,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    pdfStream('/Filter /FlateDecode', content),
  ]);
}
