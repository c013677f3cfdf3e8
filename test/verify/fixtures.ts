/**
 * Test fixtures for verify: a throwaway PKI made with openssl (root CA, RSA and ECDSA signers, an NSS db for
 * `pdfsig -add-signature`), PDFs made with pdf-lib, and an independent incremental PAdES signer written for
 * these tests (its own CMS through pkijs/asn1js + node:crypto), so attack files can be built by editing the
 * bytes of a well-signed file. Keys and certificates live in a temp dir removed by `cleanup()`.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { PDFDocument, StandardFonts, rgb } from '@cantoo/pdf-lib';
import { openPdf } from '../../src/verify/index.js';
import { isRef, type PdfValue } from '../../src/pdf/index.js';

/** The published PDF signature attack corpus (its README gives each file's source and expected verdict), copied byte for byte. */
export const CORPUS = path.join(import.meta.dirname, '../fixtures/pdf-attacks');
export const corpusFile = (rel: string) => new Uint8Array(fs.readFileSync(path.join(CORPUS, rel)));

export interface Signer {
  keyPem: string;
  certPem: string;
  chainPem: string[];
}

export interface TestPki {
  dir: string;
  caPem: string;
  rsa: Signer;
  ec: Signer;
  /** A self-signed signer nobody trusts. */
  stranger: Signer;
  /** A time-stamping authority issued by the test root (EKU timeStamping), and an untrusted self-signed one. */
  tsa: Signer;
  strangerTsa: Signer;
  /** A signer whose certificate only allows key encipherment. */
  encipherOnly: Signer;
  nssDir: string;
  nssNick: string;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** `<name>.csr` in dir signed by the CA `<ca>.pem`/`<ca>.key` with the extension file extFile, into `<name>.pem`; its PEM and key. */
export function caSigns(dir: string, name: string, ca: string, extFile: string): { certPem: string; keyPem: string } {
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '365',
    '-extfile',
    extFile,
  ]);
  return { keyPem: fs.readFileSync(path.join(dir, `${name}.key`), 'utf8'), certPem: fs.readFileSync(path.join(dir, `${name}.pem`), 'utf8') };
}

export function makePki(): TestPki {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-verify-pki-'));
  fs.writeFileSync(path.join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '3650',
    '-subj',
    '/CN=Verify Test Root CA/O=Folio Tests',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const leaf = (name: string, keyArgs: string[], subj: string) => {
    openssl(dir, ['req', '-newkey', ...keyArgs, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subj]);
    return caSigns(dir, name, 'ca', 'leaf.ext');
  };
  const caPem = fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8');
  const rsa = leaf('rsa', ['rsa:2048'], '/CN=Alice Signer/emailAddress=alice@example.com');
  const ec = leaf('ec', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], '/CN=Bob Signer/emailAddress=bob@example.com');
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'stranger.key',
    '-out',
    'stranger.pem',
    '-days',
    '365',
    '-subj',
    '/CN=Mallory Stranger',
  ]);
  const stranger = {
    keyPem: fs.readFileSync(path.join(dir, 'stranger.key'), 'utf8'),
    certPem: fs.readFileSync(path.join(dir, 'stranger.pem'), 'utf8'),
    chainPem: [],
  };
  fs.writeFileSync(
    path.join(dir, 'tsa.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
  );
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', '/CN=Verify Test TSA']);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tsa.pem',
    '-days',
    '365',
    '-extfile',
    'tsa.ext',
  ]);
  const tsa = {
    keyPem: fs.readFileSync(path.join(dir, 'tsa.key'), 'utf8'),
    certPem: fs.readFileSync(path.join(dir, 'tsa.pem'), 'utf8'),
    chainPem: [caPem],
  };
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'stsa.key',
    '-out',
    'stsa.pem',
    '-days',
    '365',
    '-subj',
    '/CN=Stranger TSA',
    '-addext',
    'extendedKeyUsage=critical,timeStamping',
  ]);
  const strangerTsa = {
    keyPem: fs.readFileSync(path.join(dir, 'stsa.key'), 'utf8'),
    certPem: fs.readFileSync(path.join(dir, 'stsa.pem'), 'utf8'),
    chainPem: [],
  };
  fs.writeFileSync(path.join(dir, 'enc.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,keyEncipherment\n');
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'enc.key', '-out', 'enc.csr', '-subj', '/CN=Encipher Only']);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'enc.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'enc.pem',
    '-days',
    '365',
    '-extfile',
    'enc.ext',
  ]);
  const encipherOnly = {
    keyPem: fs.readFileSync(path.join(dir, 'enc.key'), 'utf8'),
    certPem: fs.readFileSync(path.join(dir, 'enc.pem'), 'utf8'),
    chainPem: [caPem],
  };

  // NSS database for pdfsig -add-signature (poppler signs through NSS).
  const nssDir = path.join(dir, 'nss');
  fs.mkdirSync(nssDir);
  execFileSync('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password'], { stdio: 'pipe' });
  openssl(dir, [
    'pkcs12',
    '-export',
    '-inkey',
    'rsa.key',
    '-in',
    'rsa.pem',
    '-certfile',
    'ca.pem',
    '-name',
    'alice',
    '-out',
    'rsa.p12',
    '-passout',
    'pass:',
  ]);
  execFileSync('pk12util', ['-i', path.join(dir, 'rsa.p12'), '-d', `sql:${nssDir}`, '-W', ''], { stdio: 'pipe' });
  execFileSync('certutil', ['-A', '-d', `sql:${nssDir}`, '-n', 'testca', '-t', 'CT,C,C', '-i', path.join(dir, 'ca.pem')], { stdio: 'pipe' });
  return {
    dir,
    caPem,
    rsa: { ...rsa, chainPem: [caPem] },
    ec: { ...ec, chainPem: [caPem] },
    stranger,
    tsa,
    strangerTsa,
    encipherOnly,
    nssDir,
    nssNick: 'alice',
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Signs with poppler: `pdfsig -add-signature` through the NSS db (files in the PKI temp dir). */
export function pdfsigSign(pki: TestPki, pdf: Uint8Array, opts: { etsi?: boolean; field?: string } = {}): Uint8Array {
  const input = path.join(pki.dir, `in-${crypto.randomUUID()}.pdf`);
  const output = path.join(pki.dir, `out-${crypto.randomUUID()}.pdf`);
  fs.writeFileSync(input, pdf);
  try {
    execFileSync(
      'pdfsig',
      [
        '-add-signature',
        '-nssdir',
        `sql:${pki.nssDir}`,
        '-nick',
        pki.nssNick,
        '-digest',
        'SHA256',
        '-new-signature-field-name',
        opts.field ?? 'PopplerSig',
        ...(opts.etsi ? ['-etsi'] : []),
        input,
        output,
      ],
      { stdio: 'pipe' },
    );
    return new Uint8Array(fs.readFileSync(output));
  } finally {
    fs.rmSync(input, { force: true });
    fs.rmSync(output, { force: true });
  }
}

/** `pdfsig -nocert` text for a file (an interop oracle, never the arbiter of tampering). */
export function pdfsigReport(pki: TestPki, pdf: Uint8Array): string {
  const input = path.join(pki.dir, `chk-${crypto.randomUUID()}.pdf`);
  fs.writeFileSync(input, pdf);
  try {
    return execFileSync('pdfsig', ['-nocert', input], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (e) {
    return String((e as { stdout?: Buffer }).stdout ?? '');
  } finally {
    fs.rmSync(input, { force: true });
  }
}

/** A plain PDF with a classic xref table (no object streams), `pages` pages of text. */
export async function makePdf(pages = 1, text = 'Folio verify test document'): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595, 842]);
    page.drawText(`${text} — page ${i + 1}`, { x: 50, y: 780, size: 14, font, color: rgb(0, 0, 0) });
    for (let l = 0; l < 20; l++)
      page.drawText(`Line ${l + 1}: the quick brown fox jumps over the lazy dog.`, { x: 50, y: 740 - l * 18, size: 10, font });
  }
  doc.setProducer('folio-tests');
  return new Uint8Array(await doc.save({ useObjectStreams: false }));
}

// ---------------------------------------------------------------------------------------------------------
// Serialising values back (for appended updates that rewrite the catalog, a page or a field).

// Deliberately independent of src/pdf/serialize.ts: this is an oracle, attack files are not built with the code under test.
export function serialize(v: PdfValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map(serialize).join(' ')}]`;
  switch (v.kind) {
    case 'name':
      return `/${v.name.replace(/[^!-~]|[#()<>[\]{}/%]/g, (c) => `#${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;
    case 'string':
      return `<${Buffer.from(v.bytes).toString('hex')}>`;
    case 'ref':
      return `${v.num} ${v.gen} R`;
    case 'dict':
      return `<<${[...v.map].map(([k, x]) => `/${k} ${serialize(x)}`).join(' ')}>>`;
    case 'stream':
      throw new Error('streams are not re-serialised');
  }
}

export interface UpdateObject {
  num: number;
  body: string | Uint8Array;
}

/**
 * Appends an incremental update (objects + classic xref + trailer) to `pdf`. `prev` false omits /Prev,
 * `xref: 'empty'` writes an empty xref section (the isa-3 shape).
 */
export function appendUpdate(
  pdf: Uint8Array,
  objects: UpdateObject[],
  opts: {
    prev?: boolean;
    xref?: 'table' | 'empty';
    xrefOverride?: Array<{ num: number; offset: number }>;
    info?: number;
    /** Further trailer entries, written as given (e.g. `/FooBar 10 0 R`). */
    trailerExtra?: string;
  } = {},
): Uint8Array {
  const doc = openPdf(pdf);
  const last = doc.revisions[doc.last]!;
  const trailer = doc.trailerAt(doc.last)!;
  const chunks: Buffer[] = [Buffer.from(pdf)];
  let pos = pdf.length;
  if (pdf[pdf.length - 1] !== 0x0a) {
    chunks.push(Buffer.from('\n'));
    pos++;
  }
  const offsets: Array<{ num: number; offset: number }> = [];
  for (const o of objects) {
    const head = Buffer.from(`${o.num} 0 obj\n`);
    const body = typeof o.body === 'string' ? Buffer.from(o.body, 'latin1') : Buffer.from(o.body);
    const tail = Buffer.from('\nendobj\n');
    offsets.push({ num: o.num, offset: pos });
    chunks.push(head, body, tail);
    pos += head.length + body.length + tail.length;
  }
  const entries = opts.xrefOverride ?? offsets;
  const xrefAt = pos;
  let xref = 'xref\n';
  if (opts.xref !== 'empty') {
    for (const e of [...entries].sort((a, b) => a.num - b.num)) xref += `${e.num} 1\n${String(e.offset).padStart(10, '0')} 00000 n \n`;
  }
  const size = Math.max(Number(trailer.map.get('Size') ?? 0), ...objects.map((o) => o.num + 1));
  const root = trailer.map.get('Root');
  const info = opts.info !== undefined ? ({ kind: 'ref', num: opts.info, gen: 0 } as PdfValue) : trailer.map.get('Info');
  const id = trailer.map.get('ID');
  xref += `trailer\n<</Size ${size} /Root ${serialize(root!)}${info ? ` /Info ${serialize(info)}` : ''}${id ? ` /ID ${serialize(id)}` : ''}${
    opts.prev === false ? '' : ` /Prev ${last.startxref}`
  }${opts.trailerExtra ? ` ${opts.trailerExtra}` : ''}>>\nstartxref\n${xrefAt}\n%%EOF\n`;
  chunks.push(Buffer.from(xref, 'latin1'));
  return new Uint8Array(Buffer.concat(chunks));
}

/** The next free object number of a PDF. */
export function nextObjectNumber(pdf: Uint8Array): number {
  const doc = openPdf(pdf);
  let max = Number(doc.trailerAt(doc.last)?.map.get('Size') ?? 0);
  for (const b of doc.bodies) max = Math.max(max, b.num + 1);
  return max;
}

// ---------------------------------------------------------------------------------------------------------
// An independent PAdES signer for fixtures.

export interface SignOptions {
  signer: Signer;
  fieldName?: string;
  /** ETSI.RFC3161 makes a document timestamp: /Contents is a timestamp token over the ranges, by `signer`. */
  subFilter?: 'ETSI.CAdES.detached' | 'adbe.pkcs7.detached' | 'ETSI.RFC3161';
  /** Certify with DocMDP permission P. */
  certify?: 1 | 2 | 3;
  /** shake256: SHAKE256 with a 512-bit output (id-shake256), as Ed448 signatures use (RFC 8419). */
  digest?: 'sha256' | 'sha384' | 'sha512' | 'sha1' | 'shake256';
  /** Write the SHAKE256 digest as id-shake256-len with its 512-bit parameter instead of id-shake256. */
  shakeLen?: boolean;
  /**
   * The hash the signature algorithm names and signs with (RSA: sha…WithRSAEncryption instead of rsaEncryption;
   * ECDSA: ecdsa-with-SHA…; PSS: its parameters), when it is to differ from `digest` (an RFC 8933 mismatch).
   */
  signatureDigest?: 'sha256' | 'sha384' | 'sha512';
  pss?: boolean;
  /** RSA-PSS salt length (default 32). */
  pssSaltLength?: number;
  /** Adobe's adbe-revocationInfoArchival signed attribute (1.2.840.113583.1.1.8) with these CRLs / OCSP responses. */
  revocationArchival?: { crls?: Uint8Array[]; ocsps?: Uint8Array[] };
  contentsBytes?: number;
  /** Draw a visible appearance for the signature widget on the first page. */
  visible?: boolean;
  signingTime?: Date;
  /** Add an RFC 3161 signature timestamp token issued by this signer (acting as a TSA). */
  timestampBy?: Signer;
  /** Shift the token's genTime (e.g. into the past). */
  timestampAt?: Date;
  /** Make the token imprint something other than this signature value (a transplanted token). */
  timestampWrongImprint?: boolean;
  /** Encode the outer ContentInfo with an indefinite (BER) length, as some older signers do. */
  berOuter?: boolean;
  /** Store the signature dictionary inline in the field's /V (not as an indirect object). */
  inline?: boolean;
  /** Give the signature field a separate indirect widget annotation in /Kids (not a merged field/widget). */
  widgetKid?: boolean;
}

const DIGEST_OID: Record<string, string> = {
  shake256: '2.16.840.1.101.3.4.2.12',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
};

function firstPageRef(pdf: Uint8Array): { num: number; value: PdfValue } {
  const doc = openPdf(pdf);
  const cat = doc.catalogAt(doc.last)!;
  let node = doc.dictAt(cat.map.get('Pages'), doc.last)!;
  let ref: PdfValue | undefined = cat.map.get('Pages');
  for (let i = 0; i < 32; i++) {
    const kids = doc.deref(node.map.get('Kids'), doc.last) as PdfValue[];
    ref = kids[0];
    const d = doc.dictAt(ref, doc.last)!;
    if (!d.map.has('Kids')) return { num: (ref as { num: number }).num, value: d };
    node = d;
  }
  throw new Error('no page');
}

/** Appends a signature field + signature as one incremental update, then fills the placeholder. */
export function signPdf(pdf: Uint8Array, o: SignOptions): Uint8Array {
  const doc = openPdf(pdf);
  const last = doc.last;
  const rootRef = doc.trailerAt(last)!.map.get('Root');
  if (!isRef(rootRef)) throw new Error('no root ref');
  const catalog = doc.catalogAt(last)!;
  const page = firstPageRef(pdf);
  const pageDict = page.value as { kind: 'dict'; map: Map<string, PdfValue> };
  let n = nextObjectNumber(pdf);
  const sigNum = n++;
  const fieldNum = n++;
  const apNum = o.visible ? n++ : undefined;
  const contentsBytes = o.contentsBytes ?? 8192;
  const placeholder = '0'.repeat(contentsBytes * 2);
  const brPlaceholder = '[0 0000000000 0000000000 0000000000]';
  const time = o.signingTime ?? new Date();
  const pdfDate = `D:${time.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  const reference = o.certify
    ? ` /Reference [<</Type /SigRef /TransformMethod /DocMDP /TransformParams <</Type /TransformParams /P ${o.certify} /V /1.2>>>>]`
    : '';
  const sigType = o.subFilter === 'ETSI.RFC3161' ? 'DocTimeStamp' : 'Sig';
  const sigBody = `<</Type /${sigType} /Filter /Adobe.PPKLite /SubFilter /${o.subFilter ?? 'ETSI.CAdES.detached'} /ByteRange ${brPlaceholder} /Contents <${placeholder}> /M (${pdfDate})${reference}>>`;
  const rect = o.visible ? '[50 50 250 110]' : '[0 0 0 0]';
  const v = o.inline ? sigBody : `${sigNum} 0 R`;
  const widgetNum = o.widgetKid ? n++ : fieldNum;
  const widgetKeys = `/Type /Annot /Subtype /Widget /F 4 /Rect ${rect} /P ${page.num} 0 R${apNum ? ` /AP <</N ${apNum} 0 R>>` : ''}`;
  const fieldBody = o.widgetKid
    ? `<</FT /Sig /T (${o.fieldName ?? 'Signature1'}) /V ${v} /Kids [${widgetNum} 0 R]>>`
    : `<<${widgetKeys} /FT /Sig /T (${o.fieldName ?? 'Signature1'}) /V ${v}>>`;
  const objects: UpdateObject[] = [{ num: fieldNum, body: fieldBody }];
  if (!o.inline) objects.unshift({ num: sigNum, body: sigBody });
  if (o.widgetKid) objects.push({ num: widgetNum, body: `<<${widgetKeys} /Parent ${fieldNum} 0 R>>` });
  if (apNum) {
    const content = 'q 0 0 1 rg 0 0 200 60 re f Q';
    objects.push({
      num: apNum,
      body: `<</Type /XObject /Subtype /Form /BBox [0 0 200 60] /Length ${content.length}>>\nstream\n${content}\nendstream`,
    });
  }
  // Existing AcroForm fields are kept; the new field is appended.
  const acro = doc.dictAt(catalog.map.get('AcroForm'), last);
  const oldFields = (doc.deref(acro?.map.get('Fields'), last) as PdfValue[] | undefined) ?? [];
  const newCatalog = new Map(catalog.map);
  const newAcro: PdfValue = {
    kind: 'dict',
    map: new Map<string, PdfValue>([...(acro?.map ?? []), ['Fields', [...oldFields, { kind: 'ref', num: fieldNum, gen: 0 }]], ['SigFlags', 3]]),
    start: 0,
    end: 0,
  };
  // An indirect /AcroForm (as pdf-lib writes a form) is updated in place; otherwise the catalog holds it.
  const acroRef = catalog.map.get('AcroForm');
  if (isRef(acroRef)) objects.push({ num: acroRef.num, body: serialize(newAcro) });
  else newCatalog.set('AcroForm', newAcro);
  if (o.certify)
    newCatalog.set('Perms', { kind: 'dict', map: new Map<string, PdfValue>([['DocMDP', { kind: 'ref', num: sigNum, gen: 0 }]]), start: 0, end: 0 });
  objects.push({ num: rootRef.num, body: serialize({ kind: 'dict', map: newCatalog, start: 0, end: 0 }) });
  const annots = (doc.deref(pageDict.map.get('Annots'), last) as PdfValue[] | undefined) ?? [];
  const newPage = new Map(pageDict.map);
  newPage.set('Annots', [...annots, { kind: 'ref', num: widgetNum, gen: 0 }]);
  objects.push({ num: page.num, body: serialize({ kind: 'dict', map: newPage, start: 0, end: 0 }) });
  const prepared = appendUpdate(pdf, objects);
  return fillSignature(prepared, o);
}

/** Computes the ByteRange of the last `/Contents <000…>` placeholder, signs, and writes both in place. */
export function fillSignature(prepared: Uint8Array, o: SignOptions): Uint8Array {
  const buf = Buffer.from(prepared);
  const text = buf.toString('latin1');
  const brAt = text.lastIndexOf('/ByteRange [0 0000000000 0000000000 0000000000]');
  const cAt = text.indexOf('/Contents <', brAt) + '/Contents '.length;
  const cEnd = text.indexOf('>', cAt) + 1;
  const br = [0, cAt, cEnd, buf.length - cEnd];
  const brText = `[${br.map((x, i) => (i === 0 ? '0' : String(x).padStart(10, '0'))).join(' ')}]`;
  buf.write(brText, brAt + '/ByteRange '.length, 'latin1');
  const digestName = o.digest ?? 'sha256';
  const hash = fixtureHash(digestName).update(buf.subarray(0, cAt)).update(buf.subarray(cEnd)).digest();
  let cms = o.subFilter === 'ETSI.RFC3161' ? timestampTokenForDigest(hash, o.signer, new Date()) : buildCms(hash, o);
  if (o.berOuter) {
    // 30 82 LL LL <content> → 30 80 <content> 00 00
    const lenBytes = cms[1]! & 0x80 ? (cms[1]! & 0x7f) + 1 : 1;
    cms = new Uint8Array(Buffer.concat([Buffer.from([0x30, 0x80]), Buffer.from(cms.subarray(1 + lenBytes)), Buffer.from([0, 0])]));
  }
  const hex = Buffer.from(cms).toString('hex');
  if (hex.length > cEnd - cAt - 2) throw new Error('CMS larger than the placeholder');
  buf.write(hex, cAt + 1, 'latin1');
  return new Uint8Array(buf);
}

const fixtureHash = (name: string) => (name === 'shake256' ? crypto.createHash(name, { outputLength: 64 }) : crypto.createHash(name));

/** The AlgorithmIdentifier of a digest (id-shake256 has no parameters; id-shake256-len carries 512). */
function digestAlgorithmId(name: string, shakeLen?: boolean): pkijs.AlgorithmIdentifier {
  if (name === 'shake256')
    return shakeLen
      ? new pkijs.AlgorithmIdentifier({ algorithmId: '2.16.840.1.101.3.4.2.18', algorithmParams: new asn1js.Integer({ value: 512 }) })
      : new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID.shake256 });
  return new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID[name], algorithmParams: new asn1js.Null() });
}

/** CMS SignedData (detached) with content-type, message-digest and signing-certificate-v2 signed attributes. */
export function buildCms(messageDigest: Uint8Array, o: SignOptions, encapsulated?: { type: string; bytes: Uint8Array }): Uint8Array {
  const digestName = o.digest ?? 'sha256';
  const certDer = new crypto.X509Certificate(o.signer.certPem).raw;
  const chainDer = o.signer.chainPem.map((p) => new crypto.X509Certificate(p).raw);
  const toAb = (b: Buffer | Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  const cert = new pkijs.Certificate({ schema: asn1js.fromBER(toAb(certDer)).result });
  const chain = chainDer.map((d) => new pkijs.Certificate({ schema: asn1js.fromBER(toAb(d)).result }));
  const certHash = crypto.createHash('sha256').update(certDer).digest();
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: toAb(certHash) })] })] })],
  });
  const attrs = [
    new pkijs.Attribute({
      type: '1.2.840.113549.1.9.3',
      values: [new asn1js.ObjectIdentifier({ value: encapsulated?.type ?? '1.2.840.113549.1.7.1' })],
    }),
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.4', values: [new asn1js.OctetString({ valueHex: toAb(messageDigest) })] }),
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.16.2.47', values: [essCertIdV2] }),
  ];
  if (o.revocationArchival) {
    // RevocationInfoArchival ::= SEQUENCE { crl [0] EXPLICIT SEQUENCE OF CRL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse }
    const tagged = (n: number, items: Uint8Array[] = []) =>
      new asn1js.Constructed({
        idBlock: { tagClass: 3, tagNumber: n },
        value: [new asn1js.Sequence({ value: items.map((x) => asn1js.fromBER(toAb(x)).result) })],
      });
    attrs.push(
      new pkijs.Attribute({
        type: '1.2.840.113583.1.1.8',
        values: [new asn1js.Sequence({ value: [tagged(0, o.revocationArchival.crls), tagged(1, o.revocationArchival.ocsps)] })],
      }),
    );
  }
  const signedAttrsDer = new asn1js.Set({ value: attrs.map((a) => a.toSchema()) }).toBER();
  const sigDigest = o.signatureDigest ?? digestName;
  const key = crypto.createPrivateKey(o.signer.keyPem);
  const isEc = key.asymmetricKeyType === 'ec';
  let sigAlg: pkijs.AlgorithmIdentifier;
  let signature: Buffer;
  if (key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448') {
    // Pure EdDSA over the DER of the signed attributes (RFC 8419); no parameters.
    sigAlg = new pkijs.AlgorithmIdentifier({ algorithmId: key.asymmetricKeyType === 'ed25519' ? '1.3.101.112' : '1.3.101.113' });
    signature = crypto.sign(null, Buffer.from(signedAttrsDer), key);
  } else if (isEc) {
    const oid = (
      { sha1: '1.2.840.10045.4.1', sha256: '1.2.840.10045.4.3.2', sha384: '1.2.840.10045.4.3.3', sha512: '1.2.840.10045.4.3.4' } as Record<
        string,
        string
      >
    )[sigDigest];
    sigAlg = new pkijs.AlgorithmIdentifier({ algorithmId: oid });
    signature = crypto.sign(sigDigest, Buffer.from(signedAttrsDer), { key, dsaEncoding: 'der' });
  } else if (o.pss) {
    const saltLength = o.pssSaltLength ?? 32;
    const params = new pkijs.RSASSAPSSParams({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID[sigDigest], algorithmParams: new asn1js.Null() }),
      maskGenAlgorithm: new pkijs.AlgorithmIdentifier({
        algorithmId: '1.2.840.113549.1.1.8',
        algorithmParams: new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID[sigDigest], algorithmParams: new asn1js.Null() }).toSchema(),
      }),
      saltLength,
    });
    sigAlg = new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.10', algorithmParams: params.toSchema() });
    signature = crypto.sign(sigDigest, Buffer.from(signedAttrsDer), { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength });
  } else if (o.signatureDigest) {
    const oid = { sha256: '1.2.840.113549.1.1.11', sha384: '1.2.840.113549.1.1.12', sha512: '1.2.840.113549.1.1.13' }[o.signatureDigest];
    sigAlg = new pkijs.AlgorithmIdentifier({ algorithmId: oid, algorithmParams: new asn1js.Null() });
    signature = crypto.sign(sigDigest, Buffer.from(signedAttrsDer), key);
  } else {
    sigAlg = new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.1', algorithmParams: new asn1js.Null() });
    signature = crypto.sign(digestName, Buffer.from(signedAttrsDer), key);
  }
  let unsignedAttrs: pkijs.SignedAndUnsignedAttributes | undefined;
  if (o.timestampBy) {
    const imprinted = o.timestampWrongImprint ? Buffer.concat([signature, Buffer.from([0])]) : signature;
    const token = timestampToken(imprinted, o.timestampBy, o.timestampAt ?? new Date());
    unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [new pkijs.Attribute({ type: '1.2.840.113549.1.9.16.2.14', values: [asn1js.fromBER(toAb(Buffer.from(token))).result] })],
    });
  }
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
    digestAlgorithm: digestAlgorithmId(digestName, o.shakeLen),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: attrs }),
    signatureAlgorithm: sigAlg,
    signature: new asn1js.OctetString({ valueHex: toAb(signature) }),
    ...(unsignedAttrs ? { unsignedAttrs } : {}),
  });
  const sd = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [digestAlgorithmId(digestName, o.shakeLen)],
    encapContentInfo: new pkijs.EncapsulatedContentInfo(
      encapsulated
        ? { eContentType: encapsulated.type, eContent: new asn1js.OctetString({ valueHex: toAb(Buffer.from(encapsulated.bytes)) }) }
        : { eContentType: '1.2.840.113549.1.7.1' },
    ),
    certificates: [cert, ...chain],
    signerInfos: [signerInfo],
  });
  const ci = new pkijs.ContentInfo({ contentType: '1.2.840.113549.1.7.2', content: sd.toSchema(true) });
  return new Uint8Array(ci.toSchema().toBER());
}

/** An RFC 3161 TimeStampToken over `signatureValue` (a SignedData of a TSTInfo), signed by `tsa`. */
export function timestampToken(signatureValue: Uint8Array, tsa: Signer, genTime: Date): Uint8Array {
  return timestampTokenForDigest(crypto.createHash('sha256').update(signatureValue).digest(), tsa, genTime);
}

/** A TimeStampToken whose message imprint is the given SHA-256 digest. */
export function timestampTokenForDigest(imprint: Uint8Array, tsa: Signer, genTime: Date): Uint8Array {
  const toAb = (b: Buffer | Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  const tst = new pkijs.TSTInfo({
    version: 1,
    policy: '1.3.6.1.4.1.99999.1',
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID.sha256, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: toAb(imprint) }),
    }),
    serialNumber: new asn1js.Integer({ value: Math.floor(Math.random() * 1e9) }),
    genTime,
  });
  const tstDer = new Uint8Array(tst.toSchema().toBER());
  const digest = crypto.createHash('sha256').update(tstDer).digest();
  return buildCms(digest, { signer: tsa }, { type: '1.2.840.113549.1.9.16.1.4', bytes: tstDer });
}

/** Replaces `from` by `to` (same length) at its last occurrence. */
export function patchLast(pdf: Uint8Array, from: string, to: string): Uint8Array {
  if (from.length !== to.length) throw new Error('patch must keep the length');
  const buf = Buffer.from(pdf);
  const at = buf.lastIndexOf(from, undefined, 'latin1');
  if (at < 0) throw new Error(`"${from}" not found`);
  buf.write(to, at, 'latin1');
  return new Uint8Array(buf);
}
