/**
 * The shared PDF core (src/pdf): the audit-trail format is parsed the same way for sign and verify, and the
 * serializer writes what the reader reads back. (The DER reader is src/crypto's: test/crypto/der.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { AUDIT_TRAIL_FILE_NAME, AUDIT_TRAIL_FORMAT, PdfDocument, parseAuditRecord, serialize } from '../../src/pdf/index.js';

describe('audit-trail format', () => {
  it('has one name and one version string', () => {
    expect(AUDIT_TRAIL_FILE_NAME).toBe('audit-trail.json');
    expect(AUDIT_TRAIL_FORMAT).toBe('folio-audit-trail/1');
  });

  it('accepts only a JSON object with the format string', () => {
    expect(parseAuditRecord('{"format":"folio-audit-trail/1","pdfLength":3}')).toEqual({ record: { format: AUDIT_TRAIL_FORMAT, pdfLength: 3 } });
    expect(parseAuditRecord('nope')).toEqual({ problem: 'audit-trail.json is not JSON' });
    expect(parseAuditRecord('[1]')).toEqual({ problem: 'audit-trail.json is not an object' });
    expect(parseAuditRecord('{"format":"folio-audit-trail/2"}')).toEqual({ problem: 'audit-trail.json is not folio-audit-trail/1' });
  });
});

describe('serializer and reader', () => {
  it('round-trips a dictionary through the reader', () => {
    const body = serialize({
      kind: 'dict',
      map: new Map<string, never>([
        ['Type', { kind: 'name', name: 'Catalog' } as never],
        ['A b', [1, 2.5, -0.25, true, null] as never],
        ['S', { kind: 'string', bytes: Buffer.from('hi'), hex: true, start: 0, end: 0 } as never],
      ]),
      start: 0,
      end: 0,
    });
    const pdf = `%PDF-1.7\n1 0 obj\n${body}\nendobj\nxref\n0 2\n0000000000 65535 f \n0000000009 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n${9 + `1 0 obj\n${body}\nendobj\n`.length}\n%%EOF\n`;
    const doc = new PdfDocument(Buffer.from(pdf, 'latin1'));
    const cat = doc.catalogAt(doc.last)!;
    expect(serialize(cat)).toBe(body);
    expect(doc.revisions[0]!.xref).toBe('table');
  });
});
