// One shape for every extracted text: no NUL or other control characters, no lone surrogates (both
// break PostgreSQL text and JSON), Unix line ends, tidy spaces, at most one blank line, trimmed.
// Tabs inside lines stay: they separate spreadsheet cells.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL = /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/g;
const SPACES = /[ \f\u00A0\u2000-\u200A\u202F\u205F\u3000]+/g;

/** @param {string} text */
export function normalizeText(text) {
  return text
    .replace(LONE_SURROGATE, '')
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .replace(CONTROL, '')
    .replace(SPACES, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/ *\t */g, '\t')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
