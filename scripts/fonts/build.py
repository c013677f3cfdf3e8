#!/usr/bin/python3
"""Builds the metric-compatible substitutes of Office fonts listed in fonts/faces.json from open-licensed fonts
installed by Debian packages, so that DOCX→PDF breaks lines and spaces them where Word does (fonts/README.md).

    /usr/bin/python3 scripts/fonts/build.py [--out fonts/build] [--force]

For every face: the base font's outlines, each glyph scaled horizontally to the Office face's advance width
(fonts/metrics/widths.json; glyphs without a known width by the median ratio) and vertically so that its
x-height and cap height are the Office face's; kerning scaled with the widths; hinting dropped (it fits the old
outlines, and PDF export does not use it); vertical metrics set so that LibreOffice's line height and baseline
are Word's: Word lays a line out with the typo ascent/descent when the font sets USE_TYPO_METRICS, else with
the win ascent/descent plus GDI's external leading (hhea line gap beyond the win height), while LibreOffice
uses hhea (typo with USE_TYPO_METRICS), so the result carries those values in hhea, typo and win alike, with
USE_TYPO_METRICS set. Names are Folio's own (the base fonts' licences reserve theirs); the base's copyright and
licence notices stay in the name table, and each base package's Debian copyright file is copied beside the
fonts (LICENSES/).

The output folder gets a manifest.json with the families and a hash of every input (this script, the JSON
files, the base fonts, fontTools' version): a run whose inputs did not change returns at once, so
scripts/setup.sh calls it every time. Needs python3-fonttools.
"""
import hashlib
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile

import fontTools
from fontTools.pens.recordingPen import DecomposingRecordingPen
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib import TTFont
from fontTools.ttLib.tables import ttProgram

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
FONTS_ROOT = os.environ.get('FOLIO_FONT_SOURCES', '/usr/share/fonts')
# The range a glyph's outline is stretched or squeezed over; beyond it the difference goes into side bearings.
MIN_SCALE, MAX_SCALE = 0.7, 1.35
DROP_TABLES = ('fpgm', 'prep', 'cvt ', 'hdmx', 'LTSH', 'VDMX', 'DSIG', 'gasp', 'FFTM', 'MATH', 'cvar')
MANIFEST = 'manifest.json'


def load_json(*parts):
    with open(os.path.join(ROOT, *parts), encoding='utf-8') as f:
        return json.load(f)


def input_hash(spec):
    h = hashlib.sha256()
    h.update(fontTools.version.encode())
    for rel in ('scripts/fonts/build.py', 'fonts/faces.json', 'fonts/metrics/widths.json',
                'fonts/metrics/word-pdf.json', 'fonts/metrics/published.json'):
        with open(os.path.join(ROOT, rel), 'rb') as f:
            h.update(rel.encode() + b'\0' + f.read())
    for face in spec['faces']:
        with open(os.path.join(FONTS_ROOT, face['base']), 'rb') as f:
            h.update(face['base'].encode() + b'\0' + hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def vertical_metrics(key, word, published):
    """(ascent, descent > 0, line gap, x-height, cap height) in units of `unitsPerEm`, as Word lays lines out."""
    if key in word:
        face = word[key]
        os2, hhea, upm = face['os2'], face['hhea'], face['unitsPerEm']
        if os2['useTypoMetrics']:
            asc, desc, gap = os2['typoAscender'], -os2['typoDescender'], os2['typoLineGap']
        else:
            asc, desc = os2['winAscent'], os2['winDescent']
            gap = max(0, hhea['ascent'] - hhea['descent'] + hhea['lineGap'] - (asc + desc))
        return upm, asc, desc, gap, os2['xHeight'], os2['capHeight']
    face = published[key]
    return face['unitsPerEm'], face['ascent'], -face['descent'], face['lineGap'], face['xHeight'], face['capHeight']


def glyph_top(font, char):
    glyf = font['glyf']
    name = font.getBestCmap().get(ord(char))
    g = glyf[name]
    g.recalcBounds(glyf)
    return g.yMax


def y_mapper(base_xh, base_cap, xh, cap):
    """Piecewise-linear vertical map: x-height to x-height, cap height to cap height, proportional outside."""
    s_x, s_cap = xh / base_xh, cap / base_cap

    def f(y):
        if y <= 0:
            return y * s_cap
        if y <= base_xh:
            return y * s_x
        if y <= base_cap:
            t = (y - base_xh) / (base_cap - base_xh)
            return xh + t * (cap - xh)
        return cap + (y - base_cap) * s_cap

    return f


class MapPen:
    """Replays a recording through a point transform (x, y) -> (x', y') into another pen."""

    def __init__(self, out, fx, fy):
        self.out, self.fx, self.fy = out, fx, fy

    def pt(self, p):
        return (self.fx(p[0]), self.fy(p[1]))

    def replay(self, value):
        for op, args in value:
            if op in ('moveTo', 'lineTo'):
                getattr(self.out, op)(self.pt(args[0]))
            elif op in ('qCurveTo', 'curveTo'):
                getattr(self.out, op)(*[self.pt(a) if a is not None else None for a in args])
            elif op == 'closePath':
                self.out.closePath()
            elif op == 'endPath':
                self.out.endPath()


def scale_kerning(font, k):
    """Kerning values follow the widths: scaled by the median horizontal scale."""
    if 'kern' in font:
        for table in font['kern'].kernTables:
            if hasattr(table, 'kernTable'):
                table.kernTable = {pair: int(round(v * k)) for pair, v in table.kernTable.items()}
    if 'GPOS' not in font or font['GPOS'].table.LookupList is None:
        return

    def scale_value(v):
        if v is not None and getattr(v, 'XAdvance', None):
            v.XAdvance = int(round(v.XAdvance * k))

    for lookup in font['GPOS'].table.LookupList.Lookup:
        for sub in lookup.SubTable:
            if lookup.LookupType == 9:
                sub = sub.ExtSubTable
            if getattr(sub, 'LookupType', lookup.LookupType) != 2:
                continue
            if sub.Format == 1:
                for ps in sub.PairSet:
                    for rec in ps.PairValueRecord:
                        scale_value(rec.Value1)
            elif sub.Format == 2:
                for c1 in sub.Class1Record:
                    for c2 in c1.Class2Record:
                        scale_value(c2.Value1)


def ligatures_as_sums(font, target, measured_glyphs):
    """A ligature (GSUB liga/clig: fi, fl, ffi, …) without a measured width is as wide as its letters: LibreOffice
    ligates by default, Word only where the document asks (w14:ligatures), so a ligature must not change the
    line's width."""
    if 'GSUB' not in font or font['GSUB'].table.FeatureList is None:
        return
    table = font['GSUB'].table
    indices = {i for rec in table.FeatureList.FeatureRecord if rec.FeatureTag in ('liga', 'clig')
               for i in rec.Feature.LookupListIndex}
    for i in sorted(indices):
        lookup = table.LookupList.Lookup[i]
        for sub in lookup.SubTable:
            if lookup.LookupType == 7:
                sub = sub.ExtSubTable
            if getattr(sub, 'LookupType', lookup.LookupType) != 4:
                continue
            for first, ligs in sub.ligatures.items():
                for lig in ligs:
                    parts = [first] + list(lig.Component)
                    if lig.LigGlyph not in measured_glyphs and all(p in target for p in parts):
                        target[lig.LigGlyph] = sum(target[p] for p in parts)


def set_names(font, family, style, copyright_note):
    name = font['name']
    ps_family = family.replace(' ', '')
    ps = f"{ps_family}-{style.replace(' ', '')}"
    keep = {0, 7, 8, 9, 11, 12, 13, 14}
    name.names = [n for n in name.names if n.nameID in keep]
    ribbi = style in ('Regular', 'Bold', 'Italic', 'Bold Italic')
    values = {
        1: family if ribbi else f'{family} {style}',
        2: style if ribbi else 'Regular',
        3: f'Folio: {ps}',
        4: f'{family} {style}' if style != 'Regular' else family,
        5: 'Version 1.0; metrics adjusted by Folio (scripts/fonts/build.py)',
        6: ps,
        10: copyright_note,
    }
    for nid, value in values.items():
        name.setName(value, nid, 3, 1, 0x409)
        name.setName(value, nid, 1, 0, 0)


def build_face(face, widths_table, word, published):
    base_path = os.path.join(FONTS_ROOT, face['base'])
    font = TTFont(base_path)
    upm = font['head'].unitsPerEm
    cmap = font.getBestCmap()
    glyf = font['glyf']
    hmtx = font['hmtx']
    order = font.getGlyphOrder()
    t_upm, asc, desc, gap, t_xh, t_cap = vertical_metrics(face['vertical'], word, published)
    v = upm / t_upm
    asc, desc, gap, t_xh, t_cap = (round(x * v) for x in (asc, desc, gap, t_xh, t_cap))

    # Target advance per glyph name, from the first code point mapped to it.
    target = {}
    measured_glyphs = set()
    if face['widths']:
        entry = widths_table[face['widths']]
        measured = word.get(entry.get('measuredFrom') or '', {}).get('widths', {})
        w = upm / entry['unitsPerEm']
        for u, g in sorted(cmap.items()):
            key = f'{u:04X}'
            if key in entry['widths'] and g not in target:
                target[g] = round(entry['widths'][key] * w)
                if key in measured:
                    measured_glyphs.add(g)
    ratios = [target[g] / hmtx[g][0] for g in target if hmtx[g][0] > 0]
    median = statistics.median(ratios) if ratios else 1.0
    if face['widths']:
        for g in order:
            target.setdefault(g, round(hmtx[g][0] * median))
        ligatures_as_sums(font, target, measured_glyphs)

    change_outlines = bool(face['widths'])
    fy = y_mapper(glyph_top(font, 'x'), glyph_top(font, 'H'), t_xh, t_cap) if change_outlines else (lambda y: y)
    glyph_set = font.getGlyphSet()
    new_glyphs, new_metrics = {}, {}
    for g in order:
        adv, lsb = hmtx[g]
        want = target.get(g, round(adv * median) if change_outlines else adv)
        if not change_outlines:
            continue
        sx = want / adv if adv > 0 else median
        clamped = min(MAX_SCALE, max(MIN_SCALE, sx))
        dx = (want - adv * clamped) / 2 if adv > 0 else 0
        rec = DecomposingRecordingPen(glyph_set)
        glyph_set[g].draw(rec)
        pen = TTGlyphPen(None)
        MapPen(pen, lambda x, c=clamped, d=dx: x * c + d, fy).replay(rec.value)
        new_glyphs[g] = pen.glyph()
        new_metrics[g] = want
    if change_outlines:
        for g in order:
            glyph = new_glyphs[g]
            glyph.recalcBounds(glyf)
            glyf[g] = glyph
            hmtx[g] = (new_metrics[g], glyph.xMin if glyph.numberOfContours else 0)
        # Pair kerning follows the widths. Mark attachment anchors (GPOS) still point into the unscaled
        # outlines: combining marks may sit a little off, which Word-exported text rarely uses.
        scale_kerning(font, median)
    for tag in DROP_TABLES:
        if tag in font:
            del font[tag]
    for g in order:
        glyph = glyf[g]
        if hasattr(glyph, 'program'):
            glyph.program = ttProgram.Program()
            glyph.program.fromBytecode(b'')
    if 'maxp' in font and font['maxp'].tableVersion >= 0x10000:
        maxp = font['maxp']
        for field in ('maxZones', 'maxTwilightPoints', 'maxStorage', 'maxFunctionDefs', 'maxInstructionDefs',
                      'maxStackElements', 'maxSizeOfInstructions'):
            setattr(maxp, field, 1 if field == 'maxZones' else 0)

    hhea, os2 = font['hhea'], font['OS/2']
    hhea.ascent, hhea.descent, hhea.lineGap = asc, -desc, gap
    if os2.version < 4:
        os2.version = 4
        for field, value in (('sxHeight', t_xh), ('sCapHeight', t_cap), ('usDefaultChar', 0), ('usBreakChar', 32),
                             ('usMaxContext', 2)):
            if not hasattr(os2, field):
                setattr(os2, field, value)
        if not hasattr(os2, 'ulCodePageRange1'):
            os2.ulCodePageRange1, os2.ulCodePageRange2 = 1, 0
    os2.sTypoAscender, os2.sTypoDescender, os2.sTypoLineGap = asc, -desc, gap
    os2.usWinAscent, os2.usWinDescent = asc + gap, desc
    os2.fsSelection |= 1 << 7
    os2.sxHeight, os2.sCapHeight = t_xh, t_cap
    if face.get('weight'):
        os2.usWeightClass = face['weight']
    advances = [a for a, _ in hmtx.metrics.values() if a > 0]
    os2.xAvgCharWidth = round(sum(advances) / len(advances))
    note = (f"Derived from {os.path.basename(face['base'])} ({face['package']}) by Folio: advance widths, kerning "
            f"and vertical metrics set to those of {face['office']} as Word uses them (measured from PDFs Word "
            "exported), outlines scaled to fit; no Microsoft font data. Same licence as the original.")
    set_names(font, face['family'], face['style'], note)
    return font


def main():
    # fontTools reports the base fonts' harmless oddities (old timestamps, an overlong legacy kern subtable).
    logging.getLogger('fontTools').setLevel(logging.ERROR)
    args = sys.argv[1:]
    out = os.path.join(ROOT, 'fonts', 'build')
    if '--out' in args:
        out = os.path.abspath(args[args.index('--out') + 1])
    spec = load_json('fonts', 'faces.json')
    missing = [f['base'] for f in spec['faces'] if not os.path.exists(os.path.join(FONTS_ROOT, f['base']))]
    if missing:
        raise SystemExit('base fonts missing (install their Debian packages): ' + ', '.join(missing))
    digest = input_hash(spec)
    manifest_path = os.path.join(out, MANIFEST)
    if '--force' not in args and os.path.exists(manifest_path):
        with open(manifest_path, encoding='utf-8') as f:
            if json.load(f).get('inputHash') == digest:
                return
    widths_table = load_json('fonts', 'metrics', 'widths.json')['faces']
    word = load_json('fonts', 'metrics', 'word-pdf.json')['faces']
    published = load_json('fonts', 'metrics', 'published.json')['faces']
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='.fonts-', dir=parent)
    try:
        os.makedirs(os.path.join(tmp, 'LICENSES'))
        families = {}
        for face in spec['faces']:
            font = build_face(face, widths_table, word, published)
            font.save(os.path.join(tmp, face['file']))
            fam = families.setdefault(face['family'], {'family': face['family'], 'office': face['office'], 'files': []})
            fam['files'].append(face['file'])
            copyright_file = f"/usr/share/doc/{face['package']}/copyright"
            if os.path.exists(copyright_file):
                shutil.copyfile(copyright_file, os.path.join(tmp, 'LICENSES', f"{face['package']}.txt"))
        with open(os.path.join(tmp, 'README.txt'), 'w', encoding='utf-8') as f:
            f.write('Fonts made by scripts/fonts/build.py from the open-licensed fonts named in each file '
                    '(name table, description). Each keeps the licence of the font it was derived from: '
                    'LICENSES/ holds the Debian copyright file of every base package.\n')
        with open(os.path.join(tmp, MANIFEST), 'w', encoding='utf-8') as f:
            json.dump({'inputHash': digest, 'families': list(families.values())}, f, indent=1)
        # Replace the folder whole, so that a reader never sees half a build.
        old = None
        if os.path.exists(out):
            old = tempfile.mkdtemp(prefix='.fonts-old-', dir=parent)
            os.rename(out, os.path.join(old, 'x'))
        os.rename(tmp, out)
        os.chmod(out, 0o755)
        for root, dirs, files in os.walk(out):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    print(f'fonts: built {len(spec["faces"])} faces into {out}', file=sys.stderr)


if __name__ == '__main__':
    main()
