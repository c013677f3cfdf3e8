/**
 * The OOXML package reader on hostile ZIPs, all built here in memory: names that smuggle paths, duplicate
 * names, central records that share one entry's bytes, local headers that disagree with the directory,
 * sizes that lie, CRCs that do not match, too many entries, and a budget that stops inflating mid-way.
 */
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { buildZip, type ZipEntry } from '../support/zip.js';
import { refusal } from '../support/refusal.js';
import { badEntryName, DocxPackage, inflateEntry, InflateBudget, openDocx, readZipDirectory, type DocxLimits } from '../../src/docx/package.js';

/** Opens a package and inflates every entry, as a reader that needs them all would. */
function readAll(zip: Uint8Array, limits?: DocxLimits): DocxPackage {
  const pkg = DocxPackage.open(zip, limits);
  for (const name of pkg.names()) pkg.get(name);
  return pkg;
}

/** A ZIP written byte by byte (test/support/zip.ts), so that every header can lie; `aliases` are extra central records for an entry's bytes. */
const rawZip = (entries: ZipEntry[], aliases: Array<{ name: string; of: number }> = []) => new Uint8Array(buildZip(entries, { aliases }));

const CT = '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';
const DOC = '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p/></w:body></w:document>';
const base = (): ZipEntry[] => [
  { name: '[Content_Types].xml', data: CT },
  { name: 'word/document.xml', data: DOC },
];

describe('the package reader on honest input', () => {
  it('reads every part with its bytes (directory entries are not parts)', () => {
    const pkg = openDocx(
      rawZip([...base(), { name: 'word/', data: '', store: true }, { name: 'word/media/a.png', data: new Uint8Array([1, 2, 3]), store: true }]),
    );
    expect(pkg.names()).toEqual(['[Content_Types].xml', 'word/document.xml', 'word/media/a.png']);
    expect(pkg.text('word/document.xml')).toBe(DOC);
    expect([...pkg.get('word/media/a.png')!]).toEqual([1, 2, 3]);
  });
});

describe('entry names', () => {
  for (const name of [
    '../../x',
    'word/../../x',
    '/etc/passwd.xml',
    'word\\document2.xml',
    'C:evil.xml',
    'word//a.xml',
    'word/./a.xml',
    'a\u0000.xml',
  ]) {
    it(`refuses ${JSON.stringify(name)} naming the entry`, () => {
      expect(badEntryName(name)).toBeDefined();
      const e = refusal(() => readAll(rawZip([...base(), { name, data: 'x' }])));
      expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
      expect(e.status).toBe(422);
      expect(e.message).toContain(JSON.stringify(name).slice(1, 8));
    });
  }

  it('accepts ordinary part names and directory entries', () => {
    for (const name of ['word/document.xml', '[Content_Types].xml', 'customXml/item1.xml', 'word/', 'docProps/app.xml'])
      expect(badEntryName(name)).toBeUndefined();
  });

  it('refuses two entries with the same name, also differing only in case', () => {
    for (const dup of ['word/document.xml', 'WORD/Document.xml']) {
      const e = refusal(() => readZipDirectory(rawZip([...base(), { name: dup, data: DOC }])));
      expect(e.message).toMatch(/two entries named/);
    }
  });
});

describe('structure', () => {
  it('refuses two central records that point at the same local data (overlapping entries)', () => {
    const zip = rawZip([...base(), { name: 'word/a.xml', data: 'x'.repeat(1000) }], [{ name: 'word/b.xml', of: 2 }]);
    const e = refusal(() => readZipDirectory(zip));
    expect(e.code).toBe('UNPROCESSABLE_DOCUMENT');
    // The alias's name differs from the local header's, or the ranges overlap: either way it is refused.
    expect(e.message).toMatch(/overlapping|disagrees/);
  });

  it('refuses hundreds of records aliasing one entry (a quoted-overlap bomb) without inflating them', () => {
    const zip = rawZip(
      [...base(), { name: 'word/a.xml', localName: 'word/a.xml', data: 'x'.repeat(100_000) }],
      Array.from({ length: 300 }, (_, i) => ({ name: 'word/a.xml'.replace('a', `a${i}`), of: 2 })),
    );
    expect(() => readAll(zip)).toThrow(FolioError);
  });

  it('refuses a local header that names another entry than the central record', () => {
    const e = refusal(() => readZipDirectory(rawZip([...base(), { name: 'word/a.xml', localName: 'word/b.xml', data: 'x' }])));
    expect(e.message).toMatch(/local header of "word\/a.xml" disagrees/);
  });

  it('refuses a local header that declares other sizes than the central record', () => {
    const e = refusal(() => readZipDirectory(rawZip([...base(), { name: 'word/a.xml', data: 'hello', localDeclared: 99 }])));
    expect(e.message).toMatch(/declares other sizes/);
  });

  it('refuses more entries than the limit', () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ name: `f/${i}.bin`, data: '', store: true }));
    const e = refusal(() => readZipDirectory(rawZip([...base(), ...many])));
    expect(e.message).toMatch(/too many entries \(10003\)/);
  });
});

describe('inflating', () => {
  it('a size that lies (declared small, inflates large) stops at the declared size', () => {
    const zip = rawZip([...base(), { name: 'word/big.xml', data: 'A'.repeat(5_000_000), declared: 1000, localDeclared: 1000 }]);
    const e = refusal(() => readAll(zip));
    expect(e.message).toMatch(/"word\/big.xml" inflates beyond its declared size/);
  });

  it('a size that lies the other way (declared large, inflates small) is refused', () => {
    const zip = rawZip([...base(), { name: 'word/a.xml', data: 'abc', declared: 5000 }]);
    expect(refusal(() => readAll(zip)).message).toMatch(/wrong size/);
  });

  it('a CRC that does not match is refused', () => {
    const zip = rawZip([...base(), { name: 'word/a.xml', data: 'abc', crc: 12345 }]);
    expect(refusal(() => readAll(zip)).message).toMatch(/CRC/);
  });

  it('declared sizes beyond the limits are refused before inflating', () => {
    const zip = rawZip([...base(), { name: 'word/a.xml', data: 'abc', declared: 300 * 1024 * 1024, localDeclared: 300 * 1024 * 1024 }]);
    expect(refusal(() => readAll(zip)).message).toMatch(/size limit/);
  });

  it('a per-part ceiling and a request budget are held while inflating, naming the part and the limit', () => {
    const part = 'x'.repeat(400_000);
    const zip = rawZip([...base(), { name: 'word/a.xml', data: part }, { name: 'word/b.xml', data: part }, { name: 'word/c.xml', data: part }]);
    const entries = readZipDirectory(zip);
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(refusal(() => inflateEntry(zip, byName.get('word/a.xml')!, { maxBytes: 100_000, what: 'an XML part' })).message).toMatch(
      /"word\/a.xml" is too large: an XML part may expand to at most/,
    );
    const budget = new InflateBudget(1_000_000);
    expect(inflateEntry(zip, byName.get('word/a.xml')!, { maxBytes: 1e9, budget }).length).toBe(400_000);
    expect(inflateEntry(zip, byName.get('word/b.xml')!, { maxBytes: 1e9, budget }).length).toBe(400_000);
    const e = refusal(() => inflateEntry(zip, byName.get('word/c.xml')!, { maxBytes: 1e9, budget }));
    expect(e.message).toMatch(/expands to more than 1 MB in total \(at "word\/c.xml"\)/);
    expect(budget.used).toBe(800_000);
  });

  it('the whole package is held to its total while inflating', () => {
    const part = 'y'.repeat(300_000);
    const zip = rawZip([...base(), ...Array.from({ length: 5 }, (_, i) => ({ name: `word/p${i}.xml`, data: part }))]);
    const limits = { maxEntries: 100, maxEntryUncompressed: 1_000_000, maxTotalUncompressed: 1_000_000, maxRatio: 10_000 };
    // The declared total already says so: refused before anything is inflated.
    expect(refusal(() => readAll(zip, limits)).message).toMatch(/size limit/);
    expect(readAll(zip, { ...limits, maxTotalUncompressed: 2_000_000 }).names().length).toBe(7);
  });
});
