// XLSX through exceljs, after the zip-bomb guard. Cell values become the text a reader would see.
import ExcelJS from 'exceljs';
import { SheetText } from './spreadsheet.mjs';
import { assertSafeWorkbookZip } from './zip-guard.mjs';

/** @param {Uint8Array} bytes */
export async function xlsxText(bytes) {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await assertSafeWorkbookZip(buffer);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(/** @type {ExcelJS.Buffer} */ (/** @type {unknown} */ (buffer)));
  const text = new SheetText();
  workbook.eachSheet((sheet) => {
    text.sheet(sheet.name);
    sheet.eachRow((row) => {
      const values = /** @type {ExcelJS.CellValue[]} */ (row.values); // 1-based, sparse
      text.row(Array.from({ length: Math.max(values.length - 1, 0) }, (_, i) => cellText(values[i + 1])));
    });
  });
  return text.toString();
}

/**
 * @param {ExcelJS.CellValue | undefined} value
 * @returns {string}
 */
function cellText(value) {
  if (value == null) return '';
  if (value instanceof Date) return dateText(value);
  if (typeof value !== 'object') return String(value);
  if ('richText' in value) return value.richText.map((run) => run.text).join('');
  if ('error' in value) return String(value.error);
  if ('hyperlink' in value) return cellText(/** @type {ExcelJS.CellValue} */ (value.text));
  if ('result' in value) return cellText(/** @type {ExcelJS.CellValue} */ (value.result));
  return '';
}

/**
 * exceljs reads spreadsheet dates as UTC: a day alone when there is no time of day.
 * @param {Date} date
 */
function dateText(date) {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}
