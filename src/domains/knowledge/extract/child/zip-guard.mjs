// Zip-bomb guard for XLSX, run before exceljs sees the file: exceljs (through JSZip) inflates every entry
// whole into memory outside the V8 heap, where the process's heap limit does not reach. yauzl walks the
// central directory, refuses once the declared sizes pass MAX_INFLATED_BYTES, and streams each entry
// through an inflater that fails as soon as it yields more than its entry declared, so a zip that lies
// about its sizes is caught too, with only one chunk in memory at a time.
import yauzl from 'yauzl';
import { MAX_INFLATED_BYTES, Refusal } from './limits.mjs';

const WORKBOOK_ENTRY = 'xl/workbook.xml';

/** @param {Buffer} bytes */
export async function assertSafeWorkbookZip(bytes) {
  const zip = await openZip(bytes);
  let declared = 0;
  let hasWorkbook = false;
  try {
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      declared += entry.uncompressedSize;
      if (declared > MAX_INFLATED_BYTES) throw new Refusal('inflated_too_large', `declared ${declared} bytes`);
      if (entry.fileName.replace(/^\//, '') === WORKBOOK_ENTRY) hasWorkbook = true;
      if (!entry.fileName.endsWith('/')) await drain(zip, entry);
    }
  } finally {
    zip.close();
  }
  if (!hasWorkbook) throw new Refusal('mismatch', `no ${WORKBOOK_ENTRY}`);
}

/**
 * @param {Buffer} bytes
 * @returns {Promise<yauzl.ZipFile>}
 */
function openZip(bytes) {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true, strictFileNames: false }, (error, zip) =>
      error || !zip ? reject(new Refusal('mismatch', String(error))) : resolve(zip),
    ),
  );
}

/**
 * @param {yauzl.ZipFile} zip
 * @returns {Promise<yauzl.Entry | null>}
 */
function nextEntry(zip) {
  return new Promise((resolve, reject) => {
    const cleanUp = () => zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
    /** @param {yauzl.Entry} entry */
    const onEntry = (entry) => (cleanUp(), resolve(entry));
    const onEnd = () => (cleanUp(), resolve(null));
    /** @param {Error} error */
    const onError = (error) => (cleanUp(), reject(new Refusal('unreadable', String(error))));
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}

/**
 * Inflates one entry and throws the bytes away: yauzl checks the count against the declared size.
 * @param {yauzl.ZipFile} zip
 * @param {yauzl.Entry} entry
 * @returns {Promise<void>}
 */
function drain(zip, entry) {
  return new Promise((resolve, reject) => {
    /** @param {unknown} error */
    const fail = (error) => reject(new Refusal('inflated_too_large', String(error)));
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return fail(error);
      stream
        .on('error', fail)
        .on('end', () => resolve())
        .resume();
    });
  });
}
