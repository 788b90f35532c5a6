// The one text layout for every spreadsheet: per sheet, its name on a line, then one line per non-empty
// row with cells separated by tabs; sheets separated by a blank line.
import { TextBuilder } from './limits.mjs';

export class SheetText {
  #text = new TextBuilder();

  /** @param {string} name */
  sheet(name) {
    this.#text.push(`\n\n${name}\n`);
  }

  /** @param {readonly string[]} cells */
  row(cells) {
    const clean = cells.map((cell) => cell.replace(/\s*[\t\r\n]+\s*/g, ' ').trim());
    while (clean.length > 0 && clean[clean.length - 1] === '') clean.pop();
    if (clean.length > 0) this.#text.push(clean.join('\t') + '\n');
  }

  toString() {
    return this.#text.toString();
  }
}
