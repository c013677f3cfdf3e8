/**
 * PAdES B-T: the signature timestamp comes from a real RFC 3161 exchange over HTTP with a TSA running in
 * the test process; OpenSSL's `ts -verify` checks the embedded token against the signature value. A
 * failing TSA fails the request unless TSA_OPTIONAL=true.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import * as asn1js from 'asn1js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.js';
import {
  lastSignature,
  makePdf,
  nssDbTrusting,
  opensslCmsPrint,
  opensslCmsVerify,
  pdfsig,
  postSign,
  qpdfCheck,
  signBody,
  tmpDir,
  writeTemp,
} from './helpers.js';
import { startTestTsa, type TestTsa } from './tsa-server.js';

let work: string;
let tsa: TestTsa;
let strict: TestApi;
let optional: TestApi;

beforeAll(async () => {
  work = tmpDir('folio-tsa-test-');
  tsa = await startTestTsa(work);
  strict = await startTestApi({ env: { TSA_URL: tsa.url } });
  optional = await startTestApi({ env: { TSA_URL: tsa.url, TSA_OPTIONAL: 'true' } });
});
afterAll(async () => {
  await strict?.close();
  await optional?.close();
  await tsa?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** The SignerInfo's signature value and its signature-timestamp token, if any. */
function signerInfoParts(cms: Buffer): { signature: Buffer; token?: Buffer } {
  const contentInfo = asn1js.fromBER(cms).result as asn1js.Sequence;
  const signedData = (contentInfo.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
  const fields = signedData.valueBlock.value;
  const signerInfos = fields[fields.length - 1] as asn1js.Set;
  const signerInfo = (signerInfos.valueBlock.value[0] as asn1js.Sequence).valueBlock.value;
  const signature = Buffer.from((signerInfo[5] as asn1js.OctetString).valueBlock.valueHexView);
  const unsigned = signerInfo[6] as asn1js.Constructed | undefined;
  if (!unsigned) return { signature };
  const attr = (unsigned.valueBlock.value[0] as asn1js.Sequence).valueBlock.value;
  expect((attr[0] as asn1js.ObjectIdentifier).valueBlock.toString()).toBe('1.2.840.113549.1.9.16.2.14');
  const token = Buffer.from((attr[1] as asn1js.Set).valueBlock.value[0]!.toBER(false));
  return { signature, token };
}

describe('PAdES B-T with TSA_URL', () => {
  it('embeds a signature timestamp token that OpenSSL verifies against the signature value', async () => {
    tsa.mode = 'ok';
    const before = tsa.requests;
    const res = await postSign(strict, signBody(await makePdf(1)));
    expect(res.status).toBe(200);
    expect(tsa.requests).toBe(before + 1);
    const file = writeTemp(work, 'bt.pdf', res.pdf!);
    expect(qpdfCheck(file).status).toBe(0);
    const rootPem = strict.services.signing!.rootCertificatePem!;
    const nss = nssDbTrusting(rootPem);
    const out = pdfsig(file, nss);
    fs.rmSync(nss, { recursive: true, force: true });
    expect(out).toContain('Signature Validation: Signature is Valid.');
    expect(out).toContain('Total document signed');
    const sig = lastSignature(res.pdf!);
    expect(opensslCmsVerify(work, sig, rootPem).status).toBe(0);
    expect(opensslCmsPrint(work, sig.cms)).toMatch(/id-smime-aa-timeStampToken/);

    const { signature, token } = signerInfoParts(sig.cms);
    expect(token).toBeDefined();
    const tokenFile = writeTemp(work, 'token.der', token!);
    const root = writeTemp(work, 'tsa-root.pem', tsa.rootPem);
    const tsaCert = writeTemp(work, 'tsa.pem', tsa.tsaCertPem);
    const imprint = crypto.createHash('sha256').update(signature).digest('hex');
    const verified = execFileSync(
      'openssl',
      ['ts', '-verify', '-token_in', '-in', tokenFile, '-digest', imprint, '-CAfile', root, '-untrusted', tsaCert],
      { encoding: 'utf8' },
    );
    expect(verified).toContain('Verification: OK');
    // A token over anything else does not verify: the check above is meaningful.
    const other = crypto
      .createHash('sha256')
      .update(Buffer.concat([signature, Buffer.from([0])]))
      .digest('hex');
    expect(() =>
      execFileSync('openssl', ['ts', '-verify', '-token_in', '-in', tokenFile, '-digest', other, '-CAfile', root, '-untrusted', tsaCert], {
        stdio: 'pipe',
      }),
    ).toThrow();
  });

  for (const mode of ['http-500', 'rejection', 'wrong-nonce'] as const) {
    it(`fails the request clearly when the TSA ${mode === 'http-500' ? 'is down' : mode === 'rejection' ? 'refuses' : 'answers for another request'}`, async () => {
      tsa.mode = mode;
      const res = await postSign(strict, signBody(await makePdf(1)));
      expect(res.status).toBe(503);
      expect(res.json.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.json.message).toMatch(/timestamp authority failed/);
      expect(res.json.message).toMatch(/TSA_OPTIONAL/);
    });
  }

  it('with TSA_OPTIONAL=true signs without a timestamp (B-B) when the TSA fails', async () => {
    tsa.mode = 'http-500';
    const res = await postSign(optional, signBody(await makePdf(1)));
    expect(res.status).toBe(200);
    const sig = lastSignature(res.pdf!);
    expect(signerInfoParts(sig.cms).token).toBeUndefined();
    expect(opensslCmsVerify(work, sig, optional.services.signing!.rootCertificatePem!).status).toBe(0);
    tsa.mode = 'ok';
    const stamped = await postSign(optional, signBody(await makePdf(1)));
    expect(signerInfoParts(lastSignature(stamped.pdf!).cms).token).toBeDefined();
  });
});
