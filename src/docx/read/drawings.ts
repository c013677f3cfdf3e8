/**
 * What a drawing holds, in document order: its pictures and its text boxes. A DrawingML drawing (w:drawing:
 * wp:inline or wp:anchor) may be one picture, one shape with a text box (wps:wsp / wps:txbx), or a group
 * (wpg:wgp, nested wpg:grpSp) of pictures and shapes; a VML one (w:pict, w:object) a v:shape with
 * v:imagedata or a v:textbox, or a v:group of them. Every picture and every text box of a group is found,
 * and of an mc:AlternateContent only its first choice (else its fallback), so a shape Word writes twice
 * (DrawingML with a VML fallback) is read once.
 *
 * Bounded by the caller: the walk stops at MAX_DRAWING_DEPTH levels, and each shape found is counted against
 * the document's shape budget (ReadLimits.maxShapes, reader.ts).
 */
import { attr, child, type XElement } from '../xml.js';

export type Shape = { kind: 'picture'; rId?: string; alt: string; cx?: number; cy?: number } | { kind: 'box'; content: XElement };

/** Nesting a drawing's walk follows (groups in groups); Word's own are a few levels deep. */
const MAX_DRAWING_DEPTH = 40;

const altOf = (e: XElement | undefined) => (e && (attr(e, 'descr') || attr(e, 'title'))) || '';

/** The pictures and text boxes of a w:drawing, in document order. */
export function drawingShapes(drawing: XElement): Shape[] {
  const frame = child(drawing, 'wp:inline') ?? child(drawing, 'wp:anchor');
  if (!frame) return [];
  const frameAlt = altOf(child(frame, 'wp:docPr'));
  const extent = child(frame, 'wp:extent');
  const cx = Number(extent && attr(extent, 'cx'));
  const cy = Number(extent && attr(extent, 'cy'));
  const out: Shape[] = [];
  const walk = (e: XElement, depth: number, alt: string) => {
    if (depth > MAX_DRAWING_DEPTH) return;
    for (const c of e.children) {
      if (c.type !== 'el') continue;
      switch (c.name) {
        case 'a:blip':
          out.push({ kind: 'picture', rId: attr(c, 'r:embed') ?? attr(c, 'r:link'), alt });
          break;
        case 'w:txbxContent':
          out.push({ kind: 'box', content: c });
          break;
        case 'mc:AlternateContent': {
          const choice = child(c, 'mc:Choice') ?? child(c, 'mc:Fallback');
          if (choice) walk(choice, depth + 1, alt);
          break;
        }
        case 'pic:pic':
        case 'wps:wsp': {
          // A picture or shape of a group has its own description (pic:nvPicPr/pic:cNvPr, wps:cNvPr).
          const nv = child(c, 'pic:nvPicPr');
          const own = altOf(nv ? child(nv, 'pic:cNvPr') : child(c, 'wps:cNvPr'));
          walk(c, depth + 1, own || alt);
          break;
        }
        default:
          walk(c, depth + 1, alt);
      }
    }
  };
  walk(frame, 0, frameAlt);
  // The frame's size is the picture's when it is the only one.
  const pictures = out.filter((s) => s.kind === 'picture');
  if (pictures.length === 1) {
    const p = pictures[0]!;
    if (p.kind === 'picture') {
      if (cx > 0) p.cx = cx;
      if (cy > 0) p.cy = cy;
    }
  }
  return out;
}

/** The pictures (v:imagedata, once per relationship) and text boxes of a w:pict or w:object, in document order. */
export function vmlShapes(pict: XElement): Shape[] {
  const out: Shape[] = [];
  const seen = new Set<string>();
  const walk = (e: XElement, depth: number, alt: string) => {
    if (depth > MAX_DRAWING_DEPTH) return;
    for (const c of e.children) {
      if (c.type !== 'el') continue;
      if (c.name === 'v:imagedata') {
        const rId = attr(c, 'r:id') ?? attr(c, 'r:href');
        const key = rId ?? '';
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ kind: 'picture', rId, alt: attr(c, 'o:title') || alt });
      } else if (c.name === 'w:txbxContent') out.push({ kind: 'box', content: c });
      else if (c.name === 'mc:AlternateContent') {
        const choice = child(c, 'mc:Choice') ?? child(c, 'mc:Fallback');
        if (choice) walk(choice, depth + 1, alt);
      } else walk(c, depth + 1, attr(c, 'alt') ?? alt);
    }
  };
  walk(pict, 0, '');
  return out;
}
