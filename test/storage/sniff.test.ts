// Content types judged from the first bytes: every type the API accepts, text and the markup a browser
// would run, and what stays unknown.
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sniffContentType } from '../../src/storage/sniff.js';
import { HEAD_BYTES } from '../../src/storage/storage.js';

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
/** Real files continue past their signature; pad so detectors that look further find bytes there. */
const padded = (head: Buffer) => Buffer.concat([head, Buffer.alloc(256)]);

/** An Ogg page whose one packet is `packet` (a codec's identification header starts at byte 28). */
function oggPage(packet: Buffer): Buffer {
  // Capture pattern, version, "first page", granule position, serial, sequence, CRC, one segment of packet.length.
  const header = bytes('OggS', [0, 2], Array(8).fill(0), [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [1, packet.length]);
  return padded(Buffer.concat([header, packet]));
}

/** An ISO base media file (MP4 family) starting with its `ftyp` box. */
const ftyp = (brand: string) => padded(bytes([0, 0, 0, 0x18], 'ftyp', brand, [0, 0, 0, 0], brand, 'isom'));

/** A zip archive of stored (uncompressed) entries: local headers only, as the head of a real archive. */
function zip(entries: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, content] of Object.entries(entries)) {
    const data = Buffer.from(content);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt32LE(zlib.crc32(data), 14);
    header.writeUInt32LE(data.length, 18);
    header.writeUInt32LE(data.length, 22);
    header.writeUInt16LE(Buffer.byteLength(name), 26);
    parts.push(header, Buffer.from(name), data);
  }
  return Buffer.concat(parts);
}
const contentTypes = (main: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x.xml" ContentType="${main}"/></Types>`;

describe('sniffContentType', () => {
  const cases: [string, Buffer, string][] = [
    ['jpeg', padded(bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10], 'JFIF', [0])), 'image/jpeg'],
    ['png', padded(bytes([0x89], 'PNG\r\n', [0x1a], '\n', [0, 0, 0, 13], 'IHDR')), 'image/png'],
    ['webp', padded(bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 ')), 'image/webp'],
    ['gif', padded(bytes('GIF89a', [10, 0, 10, 0])), 'image/gif'],
    ['ogg vorbis', oggPage(bytes([1], 'vorbis')), 'audio/ogg'],
    ['ogg opus (WhatsApp voice notes)', oggPage(bytes('OpusHead', [1, 2])), 'audio/ogg; codecs=opus'],
    ['mp3 frame', padded(bytes([0xff, 0xfb, 0x90, 0x64])), 'audio/mpeg'],
    ['mp3 with an ID3 tag', padded(bytes('ID3', [3, 0, 0, 0, 0, 0, 0], [0xff, 0xfb, 0x90, 0x64])), 'audio/mpeg'],
    ['aac (ADTS)', padded(bytes([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc])), 'audio/aac'],
    ['amr', padded(bytes('#!AMR\n')), 'audio/amr'],
    ['m4a audio', ftyp('M4A '), 'audio/mp4'],
    ['mp4 video', ftyp('isom'), 'video/mp4'],
    ['3gpp video', ftyp('3gp4'), 'video/3gpp'],
    ['pdf', bytes('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj'), 'application/pdf'],
    [
      'docx',
      zip({ '[Content_Types].xml': contentTypes('application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml') }),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ],
    [
      'xlsx',
      zip({ '[Content_Types].xml': contentTypes('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml') }),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ],
    ['plain zip', zip({ 'leia-me.txt': 'oi' }), 'application/zip'],
    ['xls (compound file)', padded(bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])), 'application/x-cfb'],
    ['plain UTF-8 text', Buffer.from('Orçamento aprovado.\r\nValor: R$ 1.200,00\tOK'), 'text/plain'],
    ['csv', bytes('nome,telefone\nAna,+5511999990000\n'), 'text/plain'],
    ['html doctype', bytes('\n  <!DOCTYPE html><html><body>x</body></html>'), 'text/html'],
    ['html fragment with a script', bytes('<script>alert(1)</script>'), 'text/html'],
    ['html after a BOM', bytes([0xef, 0xbb, 0xbf], '<html>'), 'text/html'],
    ['svg', bytes('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'image/svg+xml'],
    ['svg with an xml prolog', bytes('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    ['xml', bytes('<?xml version="1.0"?><nota/>'), 'application/xml'],
    ['binary junk', bytes([0, 1, 2, 3, 0xfe, 0xff, 0x80, 0x81]), 'application/octet-stream'],
    ['latin1 text (not UTF-8)', bytes('Or\xe7amento'), 'application/octet-stream'],
    ['empty', Buffer.alloc(0), 'application/octet-stream'],
  ];
  it.each(cases)('%s', async (_name, head, expected) => {
    expect(await sniffContentType(head)).toBe(expected);
  });

  it('reads text whose head was cut inside a multi-byte character as text', async () => {
    const text = Buffer.from('€'.repeat(HEAD_BYTES));
    const head = text.subarray(0, HEAD_BYTES); // 4100 is not a multiple of the 3 bytes of "€"
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(head)).toThrow();
    expect(await sniffContentType(head)).toBe('text/plain');
  });
});
