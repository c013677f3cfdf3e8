/**
 * The exporter's read-only parse (src/docx/read/parse.ts) gives parseXml's tree (xml.ts) less the elements no
 * reader looks at (UNREAD): the same names, attributes, text and order for every XML part of every corpus
 * file, and the same bounds and errors for malformed and hostile input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDocx } from '../../src/docx/package.js';
import { parseForRead, UNREAD } from '../../src/docx/read/parse.js';
import { MAX_XML_ATTRIBUTES, MAX_XML_DEPTH, parseXml, type ParseBudget, type XDocument, type XElement, type XNode } from '../../src/docx/xml.js';
import { BROKEN_CORPUS_FILES, CORPUS_DOCX } from '../convert/docx-export-measure.js';

/**
 * A tree written out as one string (every name, attribute, text and raw node, in order, UNREAD elements left
 * out below the root), parent links checked.
 */
function plain(doc: XDocument): string {
  const out: string[] = [JSON.stringify(doc.prolog), JSON.stringify(doc.epilog)];
  const stack: Array<[XNode, XElement | undefined]> = [[doc.root, undefined]];
  while (stack.length) {
    const [n, parent] = stack.pop()!;
    if (n.type !== 'el') {
      out.push(`${n.type}:${JSON.stringify(n.raw)}`);
      continue;
    }
    if (n.parent !== parent) out.push('!parent');
    const children = n.children.filter((c) => c.type !== 'el' || !UNREAD.has(c.name));
    out.push(`<${n.name}${n.attrs.map(([k, v]) => ` ${k}=${JSON.stringify(v)}`).join('')} ${children.length}>`);
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, n]);
  }
  return out.join('\n');
}

function outcome(parse: (xml: string, part: string, budget?: ParseBudget) => XDocument, xml: string, budget?: ParseBudget): string {
  try {
    return plain(parse(xml, 'word/document.xml', budget));
  } catch (e) {
    return `error ${(e as { code?: string }).code}: ${(e as Error).message}`;
  }
}

const same = (xml: string) => expect(outcome(parseForRead, xml)).toBe(outcome(parseXml, xml));

/** The same outcome under a budget too small for xml, and the same count spent from a budget large enough. */
function sameBudget(xml: string): void {
  expect(outcome(parseForRead, xml, { elements: 50 })).toBe(outcome(parseXml, xml, { elements: 50 }));
  const a = { elements: 1000 };
  const b = { elements: 1000 };
  parseForRead(xml, 'p', a);
  parseXml(xml, 'p', b);
  expect(a).toEqual(b);
}

describe('parseForRead', () => {
  it('gives parseXml’s tree for every XML part of the corpus', () => {
    const files = fs.readdirSync(CORPUS_DOCX).filter((f) => /\.(docx|docm|dotx)$/i.test(f) && !BROKEN_CORPUS_FILES.includes(f));
    let parts = 0;
    for (const f of files) {
      let pkg;
      try {
        pkg = openDocx(new Uint8Array(fs.readFileSync(path.join(CORPUS_DOCX, f))));
      } catch {
        continue;
      }
      for (const name of pkg.names().filter((n) => /\.(xml|rels)$/i.test(n))) {
        let xml: string | undefined;
        try {
          xml = pkg.text(name);
        } catch {
          continue;
        }
        if (xml === undefined) continue;
        const a = { elements: 2_500_000 };
        const b = { elements: 2_500_000 };
        expect(outcome(parseForRead, xml, a) === outcome(parseXml, xml, b), `${f} ${name}`).toBe(true);
        expect(a.elements, `${f} ${name} budget`).toBe(b.elements);
        parts++;
      }
    }
    expect(parts).toBeGreaterThan(1000);
  }, 300_000); // ~10 s on a quiet machine, ~50 s on a loaded one

  it('leaves out only elements no reader names', () => {
    const dir = path.join(import.meta.dirname, '../../src/docx/read');
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.ts') && x !== 'parse.ts')) {
      const src = fs.readFileSync(path.join(dir, f), 'utf8');
      for (const name of UNREAD) expect(src.includes(`'${name}'`), `${f} reads ${name}, which parse.ts leaves out (UNREAD)`).toBe(false);
    }
    // Left out with their content, checked all the same.
    same('<w:p><w:pPr><w:spacing w:after="0"><w:x>t</w:x></w:spacing><w:jc w:val="center"/></w:pPr></w:p>');
    same('<w:p><w:pPr><w:spacing w:after="0"><w:x>t</w:y></w:spacing></w:pPr></w:p>');
    same('<w:p><w:pPr><w:spacing w:after="0"><!DOCTYPE x></w:spacing></w:pPr></w:p>');
    same('<w:p><w:pPr><w:spacing w:after="0"><w:x a></w:x></w:spacing></w:pPr></w:p>');
    same('<w:spacing><w:szCs/></w:spacing>');
    same('<a>' + '<w:spacing>'.repeat(MAX_XML_DEPTH) + '</w:spacing>'.repeat(MAX_XML_DEPTH) + '</a>');
    same('<a>' + '<w:spacing>'.repeat(MAX_XML_DEPTH - 2) + '</w:spacing>'.repeat(MAX_XML_DEPTH - 2) + '</a>');
    same('<a><b>' + '<w:spacing>'.repeat(MAX_XML_DEPTH - 2) + '</w:spacing>'.repeat(MAX_XML_DEPTH - 2) + '</b></a>');
    sameBudget(`<a>${'<w:szCs/>'.repeat(100)}</a>`);
  });

  it('reads odd but accepted markup as parseXml does', () => {
    for (const xml of [
      '<?xml version="1.0"?>\n<!-- c --><a x="1" y=\'2"\'  z = "3"><b/><c\tq="&amp;"/>t&lt;<![CDATA[<x>]]><d></d ></a>\n',
      '<a x="1"y="2"><b / ></a>',
      '<a foo x="1"/>',
      '<a/b x="1"/>',
      '<a x=1/>',
      '<a x="1" / >text</a>',
      '<a><b x="<c>"/></a>',
      '<a\u00a0x="1"/>',
      '<a   ></a   >',
    ])
      same(xml);
  });

  it('refuses what parseXml refuses, with its messages', () => {
    for (const xml of [
      '<!DOCTYPE a><a/>',
      '<a><!-- <!doctype x> --></a>',
      '<a><!EnTiTy x "y"></a>',
      '<a><b></a>',
      '<a></b>',
      '<a>',
      '</a>',
      '<a/><b/>',
      'text',
      '< a/>',
      '<a x="1></a>',
      '<a foo/>',
      '<a><!-- x </a>',
      '<a><?pi </a>',
      '<a>' + '<b>'.repeat(MAX_XML_DEPTH) + '</b>'.repeat(MAX_XML_DEPTH) + '</a>',
      '<a>' + '<b>'.repeat(MAX_XML_DEPTH - 2) + '</b>'.repeat(MAX_XML_DEPTH - 2) + '</a>',
      '<a>' + '<b>'.repeat(MAX_XML_DEPTH - 1) + '</b>'.repeat(MAX_XML_DEPTH - 1) + '</a>',
      `<a ${Array.from({ length: MAX_XML_ATTRIBUTES + 1 }, (_, i) => `x${i}="1"`).join(' ')}/>`,
      `<a ${Array.from({ length: MAX_XML_ATTRIBUTES }, (_, i) => `x${i}="1"`).join(' ')}/>`,
    ])
      same(xml);
  });

  it('keeps the element budget of parseXml', () => {
    sameBudget(`<a>${'<b/>'.repeat(100)}</a>`);
  });
});
