#!/usr/bin/python3
"""Advance widths for the metric-compatible substitutes of Office fonts (fonts/faces.json): every width Word
embedded in its PDFs is used as it is (fonts/metrics/word-pdf.json); the widths of the characters no Word PDF
showed are estimated from open-licensed fonts, calibrated on the measured ones.

    /usr/bin/python3 scripts/fonts/estimate-widths.py [--fonts-root /usr/share/fonts] > fonts/metrics/widths.json

Estimates (per target face, `TARGETS` below):
- `ensemble`: the mean of several reference fonts' widths, each scaled per character class (lowercase,
  uppercase, digits, other) by the median ratio measured/reference over the measured characters of that class.
  `looError` is the leave-one-out mean absolute error of this estimate on the measured ASCII characters, in
  1/1000 em: what to expect for a character no Word PDF showed.
- `derive`: another target's widths times the reference fonts' per-character ratio between two styles (bold /
  regular, narrow / regular), then calibrated like `ensemble` on this target's own measured characters and, where
  a published average width exists (fonts/metrics/published.json), scaled to its ratio to the source target's.
- Accented letters take their base letter's width where the first reference font gives them the same width.

Reference fonts, by Debian package (install them to re-run; the font build itself needs none of them):
fonts-liberation2, fonts-liberation (Liberation Sans Narrow), fonts-roboto-unhinted, fonts-noto-core,
fonts-open-sans, fonts-lato, fonts-crosextra-carlito, fonts-crosextra-caladea, fonts-dejavu-core.
Needs python3-fonttools.
"""
import json
import os
import statistics
import sys
import unicodedata

from fontTools.ttLib import TTFont

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))


def fam(folder, stem, styles):
    return {k: f'truetype/{folder}/{stem}{v}.ttf' for k, v in styles.items()}


RIBI = {'R': '-Regular', 'B': '-Bold', 'I': '-Italic', 'BI': '-BoldItalic'}
LIB = fam('liberation2', 'LiberationSans', RIBI)
LIBN = fam('liberation', 'LiberationSansNarrow', RIBI)
LIBSERIF = fam('liberation2', 'LiberationSerif', RIBI)
ROB = fam('roboto/unhinted/RobotoTTF', 'Roboto', RIBI)
NOTO = fam('noto', 'NotoSans', RIBI)
OPEN = fam('open-sans', 'OpenSans', {**RIBI, 'SB': '-Semibold', 'L': '-Light'})
LATO = fam('lato', 'Lato', {**RIBI, 'SB': '-Semibold', 'L': '-Light'})
CARL = fam('crosextra', 'Carlito', RIBI)
CALA = fam('crosextra', 'Caladea', RIBI)
DJV = fam('dejavu', 'DejaVuSans', {'R': '', 'B': '-Bold', 'I': '-Oblique', 'BI': '-BoldOblique'})
DJS = fam('dejavu', 'DejaVuSerif', {'R': '', 'B': '-Bold', 'I': '-Italic', 'BI': '-BoldItalic'})


def style_pairs(families, style, base='R'):
    return [(f[style], f[base]) for f in families if style in f and base in f]


SANS3 = [LIB, ROB, NOTO]
SEGOE3 = [OPEN, LATO, CARL]
SERIF3 = [DJS, LIBSERIF, CALA]

# Target face (PostScript-style key) -> how its widths are made. `measured` names the face in word-pdf.json.
TARGETS = {
    'Aptos': {'measured': 'Aptos', 'ensemble': [f['R'] for f in SANS3]},
    'Aptos-Bold': {'measured': 'Aptos-Bold', 'derive': 'Aptos', 'pairs': style_pairs(SANS3, 'B')},
    'Aptos-Italic': {'measured': 'Aptos-Italic', 'derive': 'Aptos', 'pairs': style_pairs(SANS3, 'I')},
    'Aptos-BoldItalic': {'measured': 'Aptos-BoldItalic', 'derive': 'Aptos', 'pairs': style_pairs(SANS3, 'BI')},
    # Aptos Display is Aptos spaced for large sizes: Aptos's widths calibrated on Display's measured ones.
    'AptosDisplay': {'measured': 'AptosDisplay', 'derive': 'Aptos', 'pairs': []},
    'AptosDisplay-Bold': {'measured': 'AptosDisplay-Bold', 'derive': 'AptosDisplay', 'pairs': style_pairs(SANS3, 'B')},
    # No Word PDF here shows Aptos Narrow: Aptos narrowed as Liberation Sans Narrow narrows Liberation Sans
    # (Arial Narrow's metrics), an estimate that nothing measured confirms.
    'AptosNarrow': {'measured': 'AptosNarrow', 'derive': 'Aptos', 'pairs': [(LIBN['R'], LIB['R'])]},
    'AptosNarrow-Bold': {'measured': 'AptosNarrow-Bold', 'derive': 'AptosNarrow', 'pairs': [(LIBN['B'], LIBN['R'])]},
    'AptosNarrow-Italic': {'measured': 'AptosNarrow-Italic', 'derive': 'AptosNarrow', 'pairs': [(LIBN['I'], LIBN['R'])]},
    'AptosNarrow-BoldItalic': {
        'measured': 'AptosNarrow-BoldItalic', 'derive': 'AptosNarrow', 'pairs': [(LIBN['BI'], LIBN['R'])]},
    'SegoeUI': {'measured': 'SegoeUI', 'ensemble': [f['R'] for f in SEGOE3]},
    'SegoeUI-Bold': {'measured': 'SegoeUI-Bold', 'derive': 'SegoeUI', 'pairs': style_pairs(SEGOE3, 'B'),
                     'published': ('SegoeUI-Bold', 'SegoeUI')},
    'SegoeUI-Italic': {'measured': 'SegoeUI-Italic', 'derive': 'SegoeUI', 'pairs': style_pairs(SEGOE3, 'I'),
                       'published': ('SegoeUI-Italic', 'SegoeUI')},
    'SegoeUI-BoldItalic': {'measured': 'SegoeUI-BoldItalic', 'derive': 'SegoeUI', 'pairs': style_pairs(SEGOE3, 'BI'),
                           'published': ('SegoeUI-BoldItalic', 'SegoeUI')},
    'SegoeUI-Semibold': {'measured': 'SegoeUI-Semibold', 'derive': 'SegoeUI', 'pairs': style_pairs([OPEN, LATO], 'SB'),
                         'published': ('SegoeUI-Semibold', 'SegoeUI')},
    'SegoeUI-Light': {'measured': 'SegoeUI-Light', 'derive': 'SegoeUI', 'pairs': style_pairs([OPEN, LATO], 'L'),
                      'published': ('SegoeUI-Light', 'SegoeUI')},
    'SegoeUI-Semilight': {'measured': 'SegoeUI-Semilight', 'derive': 'SegoeUI', 'pairs': style_pairs([OPEN, LATO], 'L'),
                          'published': ('SegoeUI-Semilight', 'SegoeUI')},
    'Verdana': {'measured': 'Verdana', 'ensemble': [DJV['R']]},
    'Verdana-Bold': {'measured': 'Verdana-Bold', 'derive': 'Verdana', 'pairs': [(DJV['B'], DJV['R'])]},
    'Verdana-Italic': {'measured': 'Verdana-Italic', 'derive': 'Verdana', 'pairs': [(DJV['I'], DJV['R'])]},
    'Verdana-BoldItalic': {'measured': 'Verdana-BoldItalic', 'derive': 'Verdana-Bold', 'pairs': [(DJV['BI'], DJV['B'])]},
    'Georgia': {'measured': 'Georgia', 'ensemble': [f['R'] for f in SERIF3]},
    # Caladea is Cambria's metric twin, yet three of the seven glyphs Word's PDF shows differ (M, d, r).
    'Cambria': {'measured': 'Cambria', 'ensemble': [CALA['R']]},
    'Georgia-Bold': {'measured': 'Georgia-Bold', 'derive': 'Georgia', 'pairs': style_pairs(SERIF3, 'B')},
    'Georgia-Italic': {'measured': 'Georgia-Italic', 'derive': 'Georgia', 'pairs': style_pairs(SERIF3, 'I')},
    'Georgia-BoldItalic': {'measured': 'Georgia-BoldItalic', 'derive': 'Georgia-Bold', 'pairs': style_pairs(SERIF3, 'BI', 'B')},
}

# The characters estimated: Latin, Greek, Cyrillic, general punctuation, currency, letterlike symbols,
# arrows, a few math and geometric shapes, Latin ligatures.
RANGES = [(0x20, 0x52F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x215F),
          (0x2190, 0x21FF), (0x2200, 0x22FF), (0x25A0, 0x25FF), (0xFB00, 0xFB06)]

# English letter frequencies (per cent) for average widths; the space counts as a letter of frequency 18.
FREQ = dict(zip('etaoinshrdlcumwfgypbvkjxqz', [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8,
                                                2.4, 2.4, 2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.15, 0.15, 0.1, 0.07]))
FREQ[' '] = 18.0


def in_ranges(u):
    return any(a <= u <= b for a, b in RANGES)


def char_class(u):
    cat = unicodedata.category(chr(u))
    if cat == 'Ll':
        return 'lower'
    if cat == 'Lu':
        return 'upper'
    if cat == 'Nd':
        return 'digit'
    return 'other'


class Ref:
    """A reference font's widths per code point, in em."""

    cache = {}

    def __init__(self, root, rel):
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            raise SystemExit(f'reference font missing: {path} (see the docstring for its Debian package)')
        font = TTFont(path, lazy=True)
        upm = font['head'].unitsPerEm
        hmtx = font['hmtx'].metrics
        self.w = {u: hmtx[g][0] / upm for u, g in (font.getBestCmap() or {}).items() if in_ranges(u)}

    @classmethod
    def get(cls, root, rel):
        if rel not in cls.cache:
            cls.cache[rel] = Ref(root, rel)
        return cls.cache[rel].w


def class_ratios(measured, prior):
    """Per class, the median of measured/prior over the characters both have (overall median where a class has
    fewer than 3)."""
    both = [u for u in measured if u in prior and prior[u] > 0 and measured[u] > 0 and u != 0x20]
    if not both:
        return None
    overall = statistics.median(measured[u] / prior[u] for u in both)
    out = {}
    for c in ('lower', 'upper', 'digit', 'other'):
        rs = [measured[u] / prior[u] for u in both if char_class(u) == c]
        out[c] = statistics.median(rs) if len(rs) >= 3 else overall
    out['space'] = measured[0x20] / prior[0x20] if 0x20 in measured and prior.get(0x20) else overall
    return out


def apply_ratios(prior, ratios):
    if ratios is None:
        return dict(prior)
    return {u: w * (ratios['space'] if u == 0x20 else ratios[char_class(u)]) for u, w in prior.items()}


def ensemble(root, refs, measured):
    """Mean over the reference fonts of each one's class-calibrated widths."""
    per_font = []
    for rel in refs:
        w = Ref.get(root, rel)
        per_font.append(apply_ratios(w, class_ratios(measured, w)))
    out = {}
    for u in set().union(*per_font):
        vals = [f[u] for f in per_font if u in f]
        out[u] = sum(vals) / len(vals)
    return out


def loo_error(root, refs, measured):
    """Leave-one-out mean absolute error (1/1000 em) of the ensemble on measured printable ASCII."""
    errs = []
    for u in [u for u in measured if 0x20 < u < 0x7F]:
        rest = {v: w for v, w in measured.items() if v != u}
        est = ensemble(root, refs, rest)
        if u in est:
            errs.append(abs(est[u] - measured[u]) * 1000)
    return round(statistics.mean(errs), 1) if errs else None


def weighted_avg(widths):
    num = sum(widths[ord(c)] * f for c, f in FREQ.items() if ord(c) in widths)
    den = sum(f for c, f in FREQ.items() if ord(c) in widths)
    return num / den if den else None


def accents_follow_base(widths, measured, first_ref):
    """An accented letter takes its base letter's width where the reference font gives both the same width."""
    out = dict(widths)
    for u in widths:
        if u in measured:
            continue
        d = unicodedata.normalize('NFD', chr(u))
        if len(d) < 2 or not all(unicodedata.combining(ch) for ch in d[1:]):
            continue
        b = ord(d[0])
        if b in widths and u in first_ref and b in first_ref and abs(first_ref[u] - first_ref[b]) < 1e-9:
            out[u] = widths[b]
    return out


def main():
    args = sys.argv[1:]
    root = '/usr/share/fonts'
    if '--fonts-root' in args:
        root = args[args.index('--fonts-root') + 1]
    word = json.load(open(os.path.join(ROOT, 'fonts', 'metrics', 'word-pdf.json')))['faces']
    published = json.load(open(os.path.join(ROOT, 'fonts', 'metrics', 'published.json')))['faces']
    done = {}
    out = {}
    for name, spec in TARGETS.items():
        m = word.get(spec['measured'])
        upm = m['unitsPerEm'] if m else 2048
        # Every measured width counts, in the estimated ranges or not (superscripts, ligatures).
        measured = {int(k, 16): v / upm for k, v in m['widths'].items()} if m else {}
        entry = {'unitsPerEm': 2048, 'measuredFrom': spec['measured'] if m else None, 'measured': len(measured)}
        if 'ensemble' in spec:
            est = ensemble(root, spec['ensemble'], measured)
            first_ref = Ref.get(root, spec['ensemble'][0])
            entry['method'] = 'ensemble of ' + ', '.join(os.path.basename(r) for r in spec['ensemble'])
            entry['looError'] = loo_error(root, spec['ensemble'], measured)
        else:
            src = done[spec['derive']]
            est = dict(src)
            first_ref = None
            if spec['pairs']:
                ratios = {}
                for style_rel, base_rel in spec['pairs']:
                    s, b = Ref.get(root, style_rel), Ref.get(root, base_rel)
                    for u in s:
                        if u in b and b[u] > 0:
                            ratios.setdefault(u, []).append(s[u] / b[u])
                est = {u: w * (sum(ratios[u]) / len(ratios[u])) for u, w in src.items() if u in ratios}
                first_ref = Ref.get(root, spec['pairs'][0][0])
            est = apply_ratios(est, class_ratios(measured, est))
            entry['method'] = f"{spec['derive']} x " + (
                ' / '.join(f'{os.path.basename(a)}:{os.path.basename(b)}' for a, b in spec['pairs']) or 'measured ratio')
            if 'published' in spec:
                target_pub, source_pub = (published[k]['xWidthAvg'] for k in spec['published'])
                want = weighted_avg(src) * target_pub / source_pub
                have = weighted_avg(est)
                k = want / have
                est = {u: (w if u in measured else w * k) for u, w in est.items()}
                entry['method'] += f'; average width scaled by {k:.3f} to the published ratio {target_pub}/{source_pub}'
        est.update(measured)
        if first_ref:
            est = accents_follow_base(est, measured, first_ref)
        done[name] = est
        entry['widths'] = {f'{u:04X}': round(w * 2048) for u, w in sorted(est.items())}
        out[name] = entry
        print(f"{name}: {len(est)} widths, {len(measured)} measured, leave-one-out error {entry.get('looError')}",
              file=sys.stderr)
    json.dump({'about': 'Advance widths (units of a 2048 em) of the Office faces the substitutes in '
               'fonts/faces.json imitate: measured ones from fonts/metrics/word-pdf.json, the rest estimated by '
               'scripts/fonts/estimate-widths.py (see its docstring).', 'faces': out}, sys.stdout, indent=0)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
