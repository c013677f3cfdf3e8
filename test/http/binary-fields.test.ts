/**
 * Base64 documents in JSON bodies (src/http/binary-fields.ts): the fields a route's schema marks
 * `contentEncoding: base64` are found once per schema, decoded where the body is parsed (all of them, merge's
 * `documents[].base64` included), replaced by a marker, and handed to the handler as bytes or as the error
 * decoding gave; nothing outside the marked paths is touched.
 */
import { describe, expect, it } from 'vitest';
import { FolioError } from '../../src/errors.js';
import { base64Bytes } from '../../src/fetch/document-source.js';
import {
  attachDecodedFields,
  base64Paths,
  DECODED_BASE64,
  decodeBase64Fields,
  decodedBuffers,
  ITEMS,
  jsonBodySchema,
  parseJsonDecoding,
} from '../../src/http/binary-fields.js';
import { AnnotateRequest, FieldsRequest } from '../../src/annotate/schema.js';
import { MergeRequest } from '../../src/merge/schema.js';
import { VerifyRequest } from '../../src/verify/schema.js';
import { SignRequest } from '../../src/sign/schema.js';
import { ConvertOptions } from '../../src/convert/schema.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (b: Uint8Array) => Buffer.from(b).toString();

describe('base64Paths', () => {
  it('finds every marked field of every JSON route', () => {
    for (const schema of [AnnotateRequest, FieldsRequest, VerifyRequest, SignRequest]) expect(base64Paths(schema)).toEqual([['document', 'base64']]);
    expect(base64Paths(MergeRequest)).toEqual([['documents', ITEMS, 'base64']]);
    expect(base64Paths(ConvertOptions)).toEqual([]);
  });

  it('is computed once per schema', () => {
    expect(base64Paths(MergeRequest)).toBe(base64Paths(MergeRequest));
  });

  it('reads the JSON entry of a route that takes several content types', () => {
    expect(jsonBodySchema({ body: { content: { 'application/json': { schema: MergeRequest } } } })).toBe(MergeRequest);
    expect(jsonBodySchema({ body: VerifyRequest })).toBe(VerifyRequest);
    expect(jsonBodySchema({ querystring: ConvertOptions })).toBeUndefined();
  });
});

describe('decoding where the body is parsed', () => {
  it('decodes every input of a merge, data URIs included, and leaves the rest of the body as it came', () => {
    const body = {
      documents: [
        { base64: b64('one') },
        { url: 'https://example.org/a.pdf' },
        { base64: `data:application/pdf;base64,${b64('three')}`, fileName: 'c.pdf' },
      ],
      options: { outline: true },
    };
    const decoded = decodeBase64Fields(body, base64Paths(MergeRequest));
    expect(decoded.map((d) => d.at)).toEqual([
      ['documents', 0, 'base64'],
      ['documents', 2, 'base64'],
    ]);
    expect(decoded.map((d) => text(d.bytes!))).toEqual(['one', 'three']);
    expect(body.documents[0]!.base64).toBe(DECODED_BASE64);
    expect(body.documents[1]).toEqual({ url: 'https://example.org/a.pdf' });
    expect(body.documents[2]!.fileName).toBe('c.pdf');
  });

  it('touches no field outside the schema’s marks (a `base64` key in other data is data)', () => {
    const body = { document: { base64: b64('doc') }, metadata: { base64: b64('not a document') }, auditTrail: [{ data: { base64: 'x' } }] };
    decodeBase64Fields(body, base64Paths(SignRequest));
    expect(body.metadata.base64).toBe(b64('not a document'));
    expect(body.auditTrail[0]!.data.base64).toBe('x');
    expect(body.document.base64).toBe(DECODED_BASE64);
  });

  it('keeps the error of a field that does not decode, for the handler to throw after the schema’s own errors', () => {
    const { value, decoded } = parseJsonDecoding(
      Buffer.from(JSON.stringify({ documents: [{ base64: b64('fine') }, { base64: '!!!' }, { base64: '' }] })),
      base64Paths(MergeRequest),
    );
    const docs = (value as { documents: Array<{ base64: string }> }).documents;
    // An empty string is left for the schema's minLength to name.
    expect(docs.map((d) => d.base64)).toEqual([DECODED_BASE64, DECODED_BASE64, '']);
    attachDecodedFields(value, decoded);
    expect(text(base64Bytes(docs[0]!, 'base64', 'documents.0.base64'))).toBe('fine');
    let thrown: unknown;
    try {
      base64Bytes(docs[1]!, 'base64', 'documents.1.base64');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(FolioError);
    expect((thrown as FolioError).code).toBe('VALIDATION_ERROR');
    expect((thrown as FolioError).details).toEqual([{ field: 'documents.1.base64', issue: 'invalid base64' }]);
  });

  it('decodes a field the parser never saw (a body built in code) when it is asked for', () => {
    expect(text(base64Bytes({ base64: b64('late') }, 'base64', 'document.base64'))).toBe('late');
    // The marker itself is not base64: a body that lost its bytes fails loudly instead of decoding to something else.
    expect(() => base64Bytes({ base64: DECODED_BASE64 }, 'base64', 'document.base64')).toThrow(/not valid base64/);
  });

  it('lists each decoded buffer once, whole, for the move back from the body thread', () => {
    const decoded = decodeBase64Fields(
      { documents: [{ base64: b64('x'.repeat(10_000)) }, { base64: b64('y'.repeat(20_000)) }] },
      base64Paths(MergeRequest),
    );
    const buffers = decodedBuffers(decoded);
    expect(buffers).toHaveLength(2);
    expect(buffers.map((b) => b.byteLength)).toEqual([10_000, 20_000]);
    // A view over part of a buffer (a small one from Node's shared pool) is never moved.
    expect(decodedBuffers([{ at: ['x'], bytes: Buffer.from('tiny') }])).toEqual([]);
  });
});
