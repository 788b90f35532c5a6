// The limits one extraction lives within, and how the extraction process tells the server why it gave up.

/** Longest text a file may yield, counted after normalisation. */
export const MAX_TEXT_CHARS = 2_000_000;

/** Extractors stop building text past this (before normalisation shrinks it), so no text grows unbounded. */
export const MAX_RAW_TEXT_CHARS = 4 * MAX_TEXT_CHARS;

/**
 * Largest total a spreadsheet zip may inflate to. A workbook past it would yield more than
 * MAX_TEXT_CHARS anyway (a cell takes some 20 to 40 bytes of XML); and exceljs holds each entry as one
 * string, so this also bounds the largest single allocation in the extraction process, far below its heap limit.
 */
export const MAX_INFLATED_BYTES = 50 * 1024 * 1024;

/**
 * - mismatch: the bytes are not the format the extension names
 * - unreadable: the library could not read the file
 * - inflated_too_large: the zip inflates past MAX_INFLATED_BYTES
 * - too_long: more text than MAX_TEXT_CHARS
 * - limits: the extraction process ran out of memory or time (or died)
 * @typedef {'mismatch' | 'unreadable' | 'inflated_too_large' | 'too_long' | 'limits'} RefusalReason
 */

/** Thrown inside the extraction process when the reason is known better than "the library failed". */
export class Refusal extends Error {
  /**
   * @param {RefusalReason} reason
   * @param {string} [detail]
   */
  constructor(reason, detail) {
    super(detail ?? reason);
    this.reason = reason;
  }
}

/** Collects text pieces and refuses once they pass MAX_RAW_TEXT_CHARS. */
export class TextBuilder {
  /** @type {string[]} */
  #parts = [];
  #length = 0;

  /** @param {string} piece */
  push(piece) {
    this.#length += piece.length;
    if (this.#length > MAX_RAW_TEXT_CHARS) throw new Refusal('too_long');
    this.#parts.push(piece);
  }

  toString() {
    return this.#parts.join('');
  }
}
