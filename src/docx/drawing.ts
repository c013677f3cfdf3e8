/**
 * The WordprocessingML fragment of an inline picture (w:drawing/wp:inline/a:graphic/pic:pic), shared by every
 * part of Folio that places an image in a document body (annotate's image and signature fields, convert's
 * <img>). One writer, so the pictures Folio builds look the same to Word and LibreOffice whichever engine made
 * them, and a fix to the markup (locks, SVG extension, escaping) lands everywhere at once.
 *
 * Sizes are in EMU (English Metric Units): 914,400 per inch, 9,525 per CSS pixel at 96 dpi, 635 per twip.
 */
import { NS } from './namespaces.js';
import { escapeAttr } from './xml.js';

export const EMU_PER_INCH = 914400;
/** One CSS pixel at 96 dpi. */
export const EMU_PER_PX = 9525;
/** One twentieth of a point, the unit of page and cell widths in WordprocessingML. */
export const EMU_PER_TWIP = 635;

/** Pixels (96 dpi) to whole EMU. */
export function pxToEmu(px: number): number {
  return Math.round(px * EMU_PER_PX);
}

/** Twips to whole EMU. */
export function twipsToEmu(twips: number): number {
  return Math.round(twips * EMU_PER_TWIP);
}

/** Whole EMU to pixels (96 dpi), fractional. */
export function emuToPx(emu: number): number {
  return emu / EMU_PER_PX;
}

export interface InlineDrawing {
  /** Relationship id (in the hosting part's .rels) of the raster image: PNG, JPEG or GIF. */
  rId: string;
  /** Relationship id of an SVG shown instead of the raster by applications that can (asvg:svgBlip). */
  svgRId?: string;
  widthEmu: number;
  heightEmu: number;
  /** wp:docPr id: unique among the drawing objects of the document. */
  id: number;
  /** wp:docPr name, e.g. "Picture 3". */
  name: string;
  /** Alternative text (wp:docPr descr); escaped here, pass it raw. */
  description: string;
  /** Optional wp:docPr title (the tooltip); escaped here, pass it raw. */
  title?: string;
  /** pic:cNvPr name; the docPr name unless given. */
  pictureName?: string;
}

const NS_A = NS.a;
const NS_PIC = NS.pic;
const NS_ASVG = 'http://schemas.microsoft.com/office/drawing/2016/SVG/main';
/** The a:ext uri Office uses for the SVG beside a raster fallback. */
const SVG_BLIP_EXT = '{96DAC541-7B7A-43D3-8B79-37D633B846F1}';

/**
 * w:drawing/wp:inline XML for a picture. The a: and pic: namespaces are declared on the fragment itself; the
 * w:, wp: and r: prefixes must be declared on the hosting part's root (they are on every document.xml, header
 * and footer Folio writes or accepts).
 */
export function inlineDrawingXml(d: InlineDrawing): string {
  const cx = Math.round(d.widthEmu);
  const cy = Math.round(d.heightEmu);
  const name = escapeAttr(d.name);
  const descr = escapeAttr(d.description);
  const title = d.title ? ` title="${escapeAttr(d.title)}"` : '';
  const picName = d.pictureName === undefined ? name : escapeAttr(d.pictureName);
  const svgExt = d.svgRId
    ? `<a:extLst><a:ext uri="${SVG_BLIP_EXT}"><asvg:svgBlip xmlns:asvg="${NS_ASVG}" r:embed="${d.svgRId}"/></a:ext></a:extLst>`
    : '';
  return (
    `<w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="${cx}" cy="${cy}"/>` +
    `<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="${d.id}" name="${name}" descr="${descr}"${title}/>` +
    `<wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="${NS_A}" noChangeAspect="1"/></wp:cNvGraphicFramePr>` +
    `<a:graphic xmlns:a="${NS_A}"><a:graphicData uri="${NS_PIC}">` +
    `<pic:pic xmlns:pic="${NS_PIC}"><pic:nvPicPr><pic:cNvPr id="0" name="${picName}" descr="${descr}"/><pic:cNvPicPr><a:picLocks noChangeAspect="1" noChangeArrowheads="1"/></pic:cNvPicPr></pic:nvPicPr>` +
    `<pic:blipFill><a:blip r:embed="${d.rId}">${svgExt}</a:blip><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>` +
    `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`
  );
}
