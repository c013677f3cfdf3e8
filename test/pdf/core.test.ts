/**
 * The shared PDF core (src/pdf): the DER reader reads what asn1js writes, the audit-trail format
 * is parsed the same way for sign and verify, and the serializer writes what the reader reads back.
 */
import * as asn1js from 'asn1js';
import { describe, expect, it } from 'vitest';
import {
  AUDIT_TRAIL_FILE_NAME,
  AUDIT_TRAIL_FORMAT,
  PdfDocument,
  parseAuditRecord,
  readTlv,
  readTlvChildren,
  serialize,
} from '../../src/pdf/index.js';

describe('DER', () => {
  it('reads what asn1js writes, long lengths included', () => {
    const big = Buffer.alloc(300, 7);
    const seq = new asn1js.Sequence({
      value: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.7.2' }), new asn1js.OctetString({ valueHex: big })],
    });
    const der = new Uint8Array(seq.toBER(false));
    const outer = readTlv(der, 0, der.length)!;
    expect(outer).toMatchObject({ tag: 0x30, end: der.length });
    const [oid, octets] = readTlvChildren(der, outer)!;
    expect(oid!.tag).toBe(0x06);
    expect(octets!.tag).toBe(0x04);
    expect(Buffer.from(der.subarray(octets!.start, octets!.contentEnd)).equals(big)).toBe(true);
  });

  it('refuses a length past the enclosing element', () => {
    expect(readTlv(Uint8Array.from([0x30, 0x05, 0x01]), 0, 3)).toBeUndefined();
  });
});

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
