// Legacy XLS (BIFF in an OLE2 container) through SheetJS, as the registry's `@e965/xlsx` republishes
// it (SheetJS 0.20.3, with the fixes for the prototype pollution of CVE-2023-30533 and the regular-
// expression denial of service of CVE-2024-22363 that the last `xlsx` on the registry, 0.18.5, lacks).
// It still runs only in the disposable extraction process, under its memory and time limits, and only
// OLE2 files reach it (file-types.ts).
import * as XLSX from '@e965/xlsx';
import { SheetText } from './spreadsheet.mjs';

/** @param {Uint8Array} bytes */
export function xlsText(bytes) {
  const workbook = XLSX.read(bytes, {
    type: 'array',
    dense: true,
    cellFormula: false,
    cellHTML: false,
    cellStyles: false,
    bookVBA: false,
  });
  const text = new SheetText();
  for (const name of workbook.SheetNames) {
    const sheet = workbook.Sheets[name];
    if (!sheet) continue;
    text.sheet(name);
    // raw: false gives each cell's formatted text, as Excel shows it.
    /** @type {unknown[][]} */
    const rows = XLSX.utils.sheet_to_json(sheet, { header: 1, raw: false, blankrows: false, defval: '' });
    for (const row of rows) text.row(row.map((cell) => (cell == null ? '' : String(cell))));
  }
  return text.toString();
}
