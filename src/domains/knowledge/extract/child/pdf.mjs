// PDF text through pdf.js (its Node build, run in the extraction process), page by page, with a blank line
// between pages. isEvalSupported: false keeps pdf.js from compiling JavaScript out of a file's fonts and
// functions (the path of CVE-2024-4367, fixed since 4.2.67); a page that cannot be read fails the file.
import { createRequire } from 'node:module';
import path from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { TextBuilder } from './limits.mjs';

const pdfjsRoot = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

/** @param {Uint8Array} bytes */
export async function pdfText(bytes) {
  const loading = getDocument({
    data: bytes,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
    // Character maps turn CJK and other CID-keyed fonts into Unicode text.
    cMapUrl: path.join(pdfjsRoot, 'cmaps') + path.sep,
    standardFontDataUrl: path.join(pdfjsRoot, 'standard_fonts') + path.sep,
  });
  const document = await loading.promise;
  try {
    const text = new TextBuilder();
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      for (const item of content.items) {
        if ('str' in item) text.push(item.hasEOL ? item.str + '\n' : item.str);
      }
      text.push('\n\n');
      page.cleanup();
    }
    return text.toString();
  } finally {
    await loading.destroy();
  }
}
