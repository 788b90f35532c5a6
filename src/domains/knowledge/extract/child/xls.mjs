// Legacy XLS (BIFF in an OLE2 container) through SheetJS. The npm build of SheetJS (xlsx 0.18.5) is the
// last one published to the registry and carries known advisories: prototype pollution on crafted
// files (CVE-2023-30533) and a regular-expression denial of service (CVE-2024-22363); fixed builds are
// distributed only outside npm. So it is imported here and nowhere else, and this module runs only in
// the disposable extraction process: a polluted prototype lives and dies with that process, and a
// runaway regular expression meets its time limit. Only OLE2 files reach it (file-types.ts).
import * as XLSX from 'xlsx';
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
