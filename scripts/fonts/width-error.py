#!/usr/bin/python3
"""Mean absolute advance-width difference, in 1/1000 em, between Word's fonts (the widths Word embedded in its
PDFs: fonts/metrics/word-pdf.json) and the font LibreOffice lays each out with: the stand-in used before the
built substitutes (an installed font of similar width) and the built substitute (fonts/build). The built fonts
take every measured width, so their figure only shows rounding; the leave-one-out error of the estimate
(fonts/metrics/widths.json, `looError`) is what to expect for the characters no Word PDF showed.

    /usr/bin/python3 scripts/fonts/width-error.py [--build fonts/build]
"""
import json
import os
import statistics
import sys
import unicodedata

from fontTools.ttLib import TTFont

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
T = '/usr/share/fonts/truetype/'
# Word's face -> the stand-in the replacement table used before the built substitutes.
BEFORE = {
    'Aptos': 'liberation2/LiberationSans-Regular.ttf',
    'AptosDisplay': 'crosextra/Carlito-Regular.ttf',
    'SegoeUI': 'lato/Lato-Regular.ttf',
    'Verdana': 'dejavu/DejaVuSans.ttf',
    'Verdana-Bold': 'dejavu/DejaVuSans-Bold.ttf',
    'Verdana-Italic': 'dejavu/DejaVuSans-Oblique.ttf',
    'Georgia': 'dejavu/DejaVuSerifCondensed.ttf',
    'Georgia-Bold': 'dejavu/DejaVuSerifCondensed-Bold.ttf',
    'Georgia-Italic': 'dejavu/DejaVuSerifCondensed-Italic.ttf',
    'Cambria': 'crosextra/Caladea-Regular.ttf',
}


def widths(path):
    font = TTFont(path, lazy=True)
    upm = font['head'].unitsPerEm
    hmtx = font['hmtx'].metrics
    return {u: hmtx[g][0] * 1000 / upm for u, g in font.getBestCmap().items()}


def error(word_face, font_widths):
    upm = word_face['unitsPerEm']
    diffs = []
    for key, w in word_face['widths'].items():
        u = int(key, 16)
        # Superscripts, subscripts and ordinals come into Word's subsets with the digits and letters (OpenType
        # feature closure), not from the text: left out, like combining marks.
        label = unicodedata.name(chr(u), '')
        if w == 0 or unicodedata.combining(chr(u)) or u not in font_widths or any(
                x in label for x in ('SUPERSCRIPT', 'SUBSCRIPT', 'ORDINAL')):
            continue
        diffs.append(abs(font_widths[u] - w * 1000 / upm))
    return (statistics.mean(diffs), len(diffs)) if diffs else (None, 0)


def main():
    args = sys.argv[1:]
    build = os.path.join(ROOT, 'fonts', 'build')
    if '--build' in args:
        build = args[args.index('--build') + 1]
    word = json.load(open(os.path.join(ROOT, 'fonts', 'metrics', 'word-pdf.json')))['faces']
    est = json.load(open(os.path.join(ROOT, 'fonts', 'metrics', 'widths.json')))['faces']
    faces = json.load(open(os.path.join(ROOT, 'fonts', 'faces.json')))['faces']
    after = {}
    for f in faces:
        after.setdefault(f['widths'] or f['vertical'], f)
    print('Word face | glyphs | before: stand-in | error | after: built | error | estimate error (leave-one-out)')
    for name, before in BEFORE.items():
        if name not in word:
            continue
        b_err, n = error(word[name], widths(T + before))
        built = after.get(name)
        a_err = error(word[name], widths(os.path.join(build, built['file'])))[0] if built else None
        loo = est.get(name, {}).get('looError')
        fmt = lambda x: f'{x:.1f}' if x is not None else '-'
        print(f"{name} | {n} | {os.path.basename(before)} | {fmt(b_err)} | "
              f"{built['file'] if built else '-'} | {fmt(a_err)} | {fmt(loo)}")


if __name__ == '__main__':
    main()
