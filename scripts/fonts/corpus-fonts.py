#!/usr/bin/python3
"""The font families DOCX files name (run fonts `w:rFonts` and theme fonts `a:latin`/`a:ea`/`a:cs`), with the
number of files naming each: which Office faces need a substitute (fonts/README.md, "Faces the corpora name").

    /usr/bin/python3 scripts/fonts/corpus-fonts.py FOLDER... [--top N]
"""
import collections
import os
import re
import sys
import zipfile

RUN_FONT = re.compile(r'<w:rFonts\b([^>]*)>')
RUN_ATTR = re.compile(r'w:(?:ascii|hAnsi|cs|eastAsia)="([^"]+)"')
THEME_FONT = re.compile(r'<a:(?:latin|ea|cs) typeface="([^"]+)"')


def families(path):
    found = set()
    try:
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if not (name.startswith('word/') and name.endswith('.xml')):
                    continue
                xml = z.read(name).decode('utf-8', 'replace')
                for m in RUN_FONT.finditer(xml):
                    found.update(RUN_ATTR.findall(m.group(1)))
                found.update(THEME_FONT.findall(xml))
    except (zipfile.BadZipFile, OSError):
        pass
    return found


def main():
    args = sys.argv[1:]
    top = 40
    if '--top' in args:
        i = args.index('--top')
        top = int(args[i + 1])
        del args[i:i + 2]
    counts = collections.Counter()
    total = 0
    for folder in args:
        for root, _, files in os.walk(folder):
            for f in files:
                if f.lower().endswith('.docx'):
                    total += 1
                    counts.update(families(os.path.join(root, f)))
    print(f'{total} files')
    for family, n in counts.most_common(top):
        print(f'{n:5d} {family}')


if __name__ == '__main__':
    main()
