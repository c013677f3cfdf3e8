#!/usr/bin/python3
"""Collects the metrics of the fonts Microsoft Word embedded in the PDFs it exported: facts about Word's fonts
(advance widths of the glyphs each document used, vertical metrics, x-height, cap height, weight), never the
fonts themselves: no outline, no hinting and no name leaves this script.

    /usr/bin/python3 scripts/fonts/collect-metrics.py PDF_OR_FOLDER... > fonts/metrics/word-pdf.json

For every embedded TrueType font (simple WinAnsi fonts and CIDFontType2), keyed by its PostScript name without
the subset tag:
- `widths`: Unicode code point (hex) -> advance width in font units, from the embedded font's `hmtx` for each
  character its `cmap` maps (a subset maps only the characters the document used); every width is checked
  against the PDF's own `/Widths` or `/W` array (1/1000 em, rounded by Word); a difference above rounding is
  listed in `disagreements`;
- `pdfWidths`: the same characters in 1/1000 em as the PDF's `/Widths`/`/W` say (what a PDF reader lays out);
- `hhea`, `os2` (win/typo ascent and descent, typo line gap, fsSelection with bit 7 USE_TYPO_METRICS, x-height,
  cap height, weight and width class, average width), `unitsPerEm`;
- `descriptor`: the PDF FontDescriptor's Ascent, Descent, CapHeight, XHeight, StemV, AvgWidth, MaxWidth;
- `sources`: the PDF files it was read from.

Needs python3-pikepdf and python3-fonttools (Debian).
"""
import io
import json
import os
import sys

import pikepdf
from fontTools.ttLib import TTFont

# WinAnsiEncoding bytes 0x80-0x9F that differ from Latin-1 (PDF 32000-1, Annex D).
WIN_ANSI = {
    0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
    0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
    0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
    0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
}


def pdf_files(args):
    for a in args:
        if os.path.isdir(a):
            for f in sorted(os.listdir(a)):
                if f.lower().endswith('.pdf'):
                    yield os.path.join(a, f)
        else:
            yield a


def simple_font_widths(font):
    """Unicode -> 1/1000 em from /FirstChar + /Widths of a WinAnsi TrueType font."""
    out = {}
    first = int(font.get('/FirstChar', 0))
    for i, w in enumerate(font.get('/Widths', [])):
        code = first + i
        # Codes the document did not use have width 0.
        if float(w) > 0:
            out[WIN_ANSI.get(code, code)] = float(w)
    return out


def cid_widths(cidfont):
    """CID (= glyph id for Identity CIDToGIDMap) -> 1/1000 em from /W and /DW."""
    out = {}
    w = list(cidfont.get('/W', []))
    i = 0
    while i < len(w):
        start = int(w[i])
        if isinstance(w[i + 1], pikepdf.Array):
            for k, v in enumerate(w[i + 1]):
                out[start + k] = float(v)
            i += 2
        else:
            for c in range(start, int(w[i + 1]) + 1):
                out[c] = float(w[i + 2])
            i += 3
    return out


def collect(paths):
    faces = {}
    for path in paths:
        pdf = pikepdf.open(path)
        if 'Word' not in str(pdf.docinfo.get('/Creator', '')):
            print(f'skipped (Creator is not Microsoft Word): {path}', file=sys.stderr)
            continue
        for obj in pdf.objects:
            if not isinstance(obj, pikepdf.Dictionary) or obj.get('/Type') != '/Font':
                continue
            subtype = obj.get('/Subtype')
            if subtype == '/TrueType':
                descriptor, pdf_w, by_gid = obj.get('/FontDescriptor'), simple_font_widths(obj), None
            elif subtype == '/CIDFontType2':
                descriptor, pdf_w, by_gid = obj.get('/FontDescriptor'), None, cid_widths(obj)
            else:
                continue
            if descriptor is None or '/FontFile2' not in descriptor:
                continue
            name = str(obj.get('/BaseFont'))[1:].split('+', 1)[-1]
            tt = TTFont(io.BytesIO(descriptor.FontFile2.read_bytes()))
            upm = tt['head'].unitsPerEm
            hmtx = tt['hmtx'].metrics
            order = tt.getGlyphOrder()
            cmap = tt.getBestCmap() or {}
            face = faces.setdefault(name, {'sources': [], 'widths': {}, 'pdfWidths': {}})
            base = os.path.basename(path)
            if base not in face['sources']:
                face['sources'].append(base)
            os2, hhea = tt['OS/2'], tt['hhea']
            metrics = {
                'unitsPerEm': upm,
                'hhea': {'ascent': hhea.ascent, 'descent': hhea.descent, 'lineGap': hhea.lineGap},
                'os2': {
                    'winAscent': os2.usWinAscent, 'winDescent': os2.usWinDescent,
                    'typoAscender': os2.sTypoAscender, 'typoDescender': os2.sTypoDescender,
                    'typoLineGap': os2.sTypoLineGap, 'fsSelection': os2.fsSelection,
                    'useTypoMetrics': bool(os2.fsSelection & (1 << 7)),
                    'xHeight': getattr(os2, 'sxHeight', None), 'capHeight': getattr(os2, 'sCapHeight', None),
                    'weightClass': os2.usWeightClass, 'widthClass': os2.usWidthClass,
                    'xAvgCharWidth': os2.xAvgCharWidth, 'italicAngle': tt['post'].italicAngle,
                },
                'descriptor': {
                    k[1:]: float(descriptor[k]) for k in
                    ('/Ascent', '/Descent', '/CapHeight', '/XHeight', '/StemV', '/AvgWidth', '/MaxWidth', '/ItalicAngle')
                    if k in descriptor
                },
            }
            for k, v in metrics.items():
                if k in face and face[k] != v:
                    raise SystemExit(f'{name}: {k} differs between {face["sources"][0]} and {base}')
                face[k] = v
            pdf_by_unicode = pdf_w or {}
            if by_gid is not None:
                pdf_by_unicode = {u: by_gid[order.index(g)] for u, g in cmap.items() if order.index(g) in by_gid}
            for u, g in cmap.items():
                adv = hmtx[g][0]
                glyph = tt['glyf'][g]
                # A subset keeps every glyph slot; only the used ones have outlines (or are spaces).
                if glyph.numberOfContours == 0 and u not in (0x20, 0xA0) and u not in pdf_by_unicode:
                    continue
                key = f'{u:04X}'
                if key in face['widths'] and face['widths'][key] != adv:
                    raise SystemExit(f'{name}: U+{key} is {face["widths"][key]} in one PDF and {adv} in {base}')
                face['widths'][key] = adv
                if u in pdf_by_unicode:
                    pw = pdf_by_unicode[u]
                    if abs(pw - adv * 1000 / upm) > 1.01:
                        # Seen for Verdana's i and l (hmtx 274.4, /Widths 272): kept, and reported.
                        face.setdefault('disagreements', {})[key] = {'hmtx': adv, 'pdf': pw}
                    face['pdfWidths'][key] = pw
    for face in faces.values():
        face['widths'] = dict(sorted(face['widths'].items()))
        face['pdfWidths'] = dict(sorted(face['pdfWidths'].items()))
    return dict(sorted(faces.items()))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    faces = collect(list(pdf_files(sys.argv[1:])))
    doc = {
        'about': 'Metrics of the fonts Microsoft Word embedded in the PDFs it exported (facts, no font data): '
        'collected by scripts/fonts/collect-metrics.py; see fonts/README.md.',
        'faces': faces,
    }
    json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
