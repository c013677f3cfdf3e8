/**
 * Long-term-validation fixtures for verify: leaves issued by the test root with any key type and with CRL
 * distribution point / OCSP URLs, CRLs and OCSP responses signed with node:crypto (their ASN.1 built with
 * @peculiar/asn1-x509 / asn1-ocsp, independently of src/), and a DSS appended as an incremental update.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestPki, Signer } from './fixtures.js';

/** A leaf issued by the test root for a key made with `openssl genpkey -algorithm <alg>` (extra extension lines optional). */
export function issueLeaf(p: TestPki, name: string, algorithm: string, subject: string, extraExt = ''): Signer {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: p.dir, stdio: 'pipe' });
  const ext = `${name}.ext`;
  fs.writeFileSync(path.join(p.dir, ext), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n${extraExt}`);
  run(['genpkey', '-algorithm', algorithm, ...(algorithm === 'RSA' ? ['-pkeyopt', 'rsa_keygen_bits:2048'] : []), '-out', `${name}.key`]);
  run(['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  run([
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '365',
    '-extfile',
    ext,
  ]);
  const read = (f: string) => fs.readFileSync(path.join(p.dir, f), 'utf8');
  return { keyPem: read(`${name}.key`), certPem: read(`${name}.pem`), chainPem: [p.caPem] };
}
