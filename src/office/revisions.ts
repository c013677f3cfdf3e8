/**
 * Accepting or rejecting every tracked change of a DOCX before LibreOffice sees it.
 *
 * Why here and not with `.uno:AcceptAllTrackedChanges`: LibreOfficeKit's postUnoCommand dispatches to the
 * desktop's active frame, which in a headless worker that loads and destroys one document after another is
 * not reliably the document being converted (measured with 7.4: the command took effect on some
 * conversions only). Rewriting the WordprocessingML revision marks is deterministic and cheap.
 *
 * Handled: run-level insertions and deletions (w:ins, w:del, nested either way), moves (w:moveFrom,
 * w:moveTo and their range marks), inserted and deleted table rows (w:trPr/w:ins|w:del), paragraph-mark
 * and cell marks, and property changes (w:*PrChange: dropped on accept; on reject the previous run
 * properties are restored, other property changes keep the current formatting).
 */
export type RevisionMode = 'accept' | 'reject';

const open = (tag: string) => `<w:${tag}(?=[\\s>])[^>]*(?<!/)>`;
const selfClosing = (tag: string) => new RegExp(`<w:${tag}(?=[\\s/])[^>]*/>`, 'g');
/** An element with its content; valid for tags that never contain themselves. */
const withContent = (tag: string) => new RegExp(`${open(tag)}[\\s\\S]*?</w:${tag}>`, 'g');
const unwrap = (xml: string, tag: string) => xml.replace(new RegExp(open(tag), 'g'), '').replace(new RegExp(`</w:${tag}>`, 'g'), '');

/** Ranges [start, end) of every `w:tr` element, nesting-aware (tables nest inside cells). */
function tableRows(xml: string): Array<[number, number]> {
  const rows: Array<[number, number]> = [];
  const stack: number[] = [];
  const re = /<(\/?)w:tr(?=[\s>/])[^>]*?(\/?)>/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    if (m[1]) {
      const start = stack.pop();
      if (start !== undefined) rows.push([start, m.index + m[0].length]);
    } else if (!m[2]) stack.push(m.index);
  }
  return rows;
}

/** Removes the rows whose own w:trPr carries a `mark` (w:ins or w:del) revision. */
function removeMarkedRows(xml: string, mark: 'ins' | 'del'): string {
  const markRe = new RegExp(`^<w:tr(?=[\\s>])[^>]*>\\s*<w:trPr>(?:(?!</w:trPr>)[\\s\\S])*<w:${mark}(?=[\\s/])`);
  const doomed = tableRows(xml).filter(([s, e]) => markRe.test(xml.slice(s, e)));
  // Outermost first is unnecessary: drop ranges inside an already removed one, then cut from the end.
  const kept = doomed.filter(([s, e]) => !doomed.some(([s2, e2]) => s2 < s && e <= e2));
  let out = xml;
  for (const [s, e] of kept.sort((a, b) => b[0] - a[0])) out = out.slice(0, s) + out.slice(e);
  return out;
}

const PROPERTY_CHANGES = ['rPrChange', 'pPrChange', 'sectPrChange', 'tblPrChange', 'trPrChange', 'tcPrChange', 'tblGridChange', 'tblPrExChange', 'numberingChange'];
const RANGE_MARKS = ['moveFromRangeStart', 'moveFromRangeEnd', 'moveToRangeStart', 'moveToRangeEnd', 'cellIns', 'cellDel', 'cellMerge'];

export function resolveRevisions(xml: string, mode: RevisionMode): string {
  let out = removeMarkedRows(xml, mode === 'accept' ? 'del' : 'ins');
  if (mode === 'reject') {
    // Restore the previous run properties: <w:rPr>current<w:rPrChange><w:rPr>old</w:rPr></w:rPrChange></w:rPr>.
    out = out.replace(
      /<w:rPr>(?:(?!<\/w:rPr>)[\s\S])*?<w:rPrChange(?=[\s>])[^>]*>\s*(?:<w:rPr\/>|<w:rPr>([\s\S]*?)<\/w:rPr>)\s*<\/w:rPrChange>\s*<\/w:rPr>/g,
      (_m, old: string | undefined) => `<w:rPr>${old ?? ''}</w:rPr>`,
    );
  }
  for (const tag of PROPERTY_CHANGES) out = out.replace(selfClosing(tag), '').replace(withContent(tag), '');
  for (const tag of RANGE_MARKS) out = out.replace(selfClosing(tag), '');
  // Paragraph-mark and row marks (self-closing) carry no content once rows are settled.
  for (const tag of ['ins', 'del', 'moveFrom', 'moveTo']) out = out.replace(selfClosing(tag), '');
  const [drop, keep] = mode === 'accept' ? [['del', 'moveFrom'], ['ins', 'moveTo']] : [['ins', 'moveTo'], ['del', 'moveFrom']];
  for (const tag of drop) out = out.replace(withContent(tag), '');
  for (const tag of keep) out = unwrap(out, tag);
  if (mode === 'reject') {
    // Deleted text comes back as ordinary text.
    out = out
      .replace(/<w:delText(?=[\s>/])/g, '<w:t')
      .replace(/<\/w:delText>/g, '</w:t>')
      .replace(/<w:delInstrText(?=[\s>/])/g, '<w:instrText')
      .replace(/<\/w:delInstrText>/g, '</w:instrText>');
  }
  return out;
}
