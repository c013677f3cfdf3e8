#!/usr/bin/python3
"""Baselines of the text lines of a PDF page, from its content stream (not from a text extractor, whose boxes
depend on each font's descriptor): every text-showing operator's baseline y (from the page top, in points),
font resource, size and the text's first x. Used to compare where Word and Folio put each line
(bench/README.md, "Word parity": line heights).

    /usr/bin/python3 scripts/fonts/baselines.py WORD.pdf [FOLIO.pdf] [--page N]

With two files the lines are paired in order and the difference printed. Needs python3-pikepdf (Debian).
"""
import sys

import pikepdf


def mul(a, b):
    return [
        a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5],
    ]


def page_lines(path, page_no):
    pdf = pikepdf.open(path)
    page = pdf.pages[page_no - 1]
    height = float(page.mediabox[3]) - float(page.mediabox[1])
    fonts = page.resources.get('/Font', {})
    names = {}
    for k in fonts.keys():
        base = str(fonts[k].get('/BaseFont', k))
        names[k] = base.split('+', 1)[-1].lstrip('/')
    ctm = [1, 0, 0, 1, 0, 0]
    stack = []
    tm = tlm = [1, 0, 0, 1, 0, 0]
    leading = 0
    font, size = None, 0
    out = []
    for operands, op in pikepdf.parse_content_stream(page):
        op = str(op)
        if op == 'q':
            stack.append(ctm)
        elif op == 'Q':
            ctm = stack.pop() if stack else ctm
        elif op == 'cm':
            ctm = mul([float(x) for x in operands], ctm)
        elif op == 'BT':
            tm = tlm = [1, 0, 0, 1, 0, 0]
        elif op == 'Tf':
            font, size = str(operands[0]), float(operands[1])
        elif op == 'TL':
            leading = float(operands[0])
        elif op == 'Tm':
            tm = tlm = [float(x) for x in operands]
        elif op in ('Td', 'TD'):
            tx, ty = float(operands[0]), float(operands[1])
            if op == 'TD':
                leading = -ty
            tm = tlm = mul([1, 0, 0, 1, tx, ty], tlm)
        elif op == 'T*':
            tm = tlm = mul([1, 0, 0, 1, 0, -leading], tlm)
        elif op in ('Tj', 'TJ', "'", '"'):
            if op in ("'", '"'):
                tm = tlm = mul([1, 0, 0, 1, 0, -leading], tlm)
            m = mul(tm, ctm)
            text = ''
            arg = operands[-1]
            items = arg if op == 'TJ' else [arg]
            for it in items:
                if isinstance(it, pikepdf.String):
                    text += bytes(it).decode('latin-1', 'replace')
            eff = size * (m[3] if m[3] else 1)
            out.append((round(height - m[5], 2), round(m[4], 2), names.get(font, font), round(eff, 2), len(text)))
    # One entry per line: the first run at each baseline.
    lines = []
    for y, x, f, s, n in out:
        if n == 0:
            continue
        if lines and abs(lines[-1][0] - y) < 0.3:
            continue
        lines.append((y, x, f, s))
    return lines


def main():
    args = sys.argv[1:]
    page = 1
    if '--page' in args:
        i = args.index('--page')
        page = int(args[i + 1])
        del args[i:i + 2]
    a = page_lines(args[0], page)
    b = page_lines(args[1], page) if len(args) > 1 else []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        left = f'{x[0]:8.2f} {x[2][:22]:22} {x[3]:5.1f}' if x else ' ' * 37
        right = f'{y[0]:8.2f} {y[2][:22]:22} {y[3]:5.1f}' if y else ''
        diff = f'{y[0] - x[0]:+6.2f}' if x and y else ''
        step = f'{x[0] - a[i - 1][0]:6.2f}' if x and i > 0 else '      '
        print(f'{left} {step} | {right} {diff}')


if __name__ == '__main__':
    main()
