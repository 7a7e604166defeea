/**
 * A minimal valid PDF for the tests, from the text of its pages: one page per entry, each line
 * of it written in Helvetica by an uncompressed content stream (`BT … (line) Tj T* … ET`), and a
 * classic cross-reference table with each object's byte offset. quire reads its text page by page.
 */

/** `text` as a PDF string literal's content: backslashes and parentheses escaped, ASCII only. */
function pdfString(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").replace(/[\\()]/g, "\\$&");
}

/** The content stream that writes `lines` down the page from its top left. */
function pageContent(lines: readonly string[]): string {
  return ["BT", "/F1 11 Tf", "14 TL", "60 780 Td", ...lines.flatMap((line) => [`(${pdfString(line)}) Tj`, "T*"]), "ET", ""].join("\n");
}

/** A PDF whose page `i` holds the lines of `pages[i]`. */
export function makePdf(pages: readonly (readonly string[])[]): Buffer {
  // Objects: 1 catalog, 2 pages, 3 font, then a content stream and its page for each page.
  const kids = pages.map((_, i) => `${5 + 2 * i} 0 R`).join(" ");
  const objects: string[] = [
    "<</Type/Catalog/Pages 2 0 R>>",
    `<</Type/Pages/Kids[${kids}]/Count ${pages.length}/MediaBox[0 0 595 842]>>`,
    "<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>",
  ];
  for (const lines of pages) {
    const content = pageContent(lines);
    objects.push(`<</Length ${Buffer.byteLength(content, "latin1")}>>\nstream\n${content}\nendstream`);
    objects.push(`<</Type/Page/Parent 2 0 R/Resources<</Font<</F1 3 0 R>>>>/Contents ${objects.length} 0 R>>`);
  }
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<</Size ${objects.length + 1}/Root 1 0 R>>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
