/**
 * SoftHSM2 tokens for the PKCS#11 signing tests: each test makes its own token directory and SOFTHSM2_CONF,
 * a throwaway OpenSSL CA issues the signing certificate, and the key is imported into the token
 * (softhsm2-util --import) and its file deleted — the set-up an operator does with a real HSM, where the key
 * is generated or imported once and never read back. Checked with tools nobody here wrote: pkcs11-tool
 * (OpenSC) lists the token's objects, pdfsig (poppler + NSS) validates the signatures.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
export const SO_PIN = '5678';
export const USER_PIN = '1234';

/** Why the PKCS#11 tests cannot run here (softhsm2 or opensc missing), or undefined when they can. */
export function hsmMissing(): string | undefined {
  if (!fs.existsSync(SOFTHSM_MODULE))
    return `SoftHSM2 is not installed (${SOFTHSM_MODULE}): apt-get install softhsm2 opensc, or run scripts/setup.sh`;
  for (const tool of ['softhsm2-util', 'pkcs11-tool']) {
    if (spawnSync(tool, ['--help'], { stdio: 'ignore' }).error)
      return `${tool} is not installed: apt-get install softhsm2 opensc, or run scripts/setup.sh`;
  }
  return undefined;
}

export type KeySpec = { type: 'ec'; curve: 'P-256' | 'P-384' | 'P-521' | 'secp256k1' } | { type: 'rsa'; bits: number };

export interface IssuedKey {
  /** The signer certificate then the CA's: SIGNING_CERT_CHAIN. */
  chainFile: string;
  certPem: string;
  rootPem: string;
  label: string;
  id: string;
  /** The key's private scalar or exponent, kept in this test's memory only: searched for in what Folio writes. */
  secret: Buffer;
}

export class TestToken {
  readonly dir: string;
  readonly conf: string;
  readonly tokenDir: string;
  readonly pinFile: string;
  /** Whatever the tests need beside the token (CA, certificates, PIN file), outside the token directory. */
  readonly work: string;
  private caReady = false;

  constructor(readonly label = 'folio') {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-hsm-'));
    this.tokenDir = path.join(this.dir, 'tokens');
    this.work = path.join(this.dir, 'work');
    fs.mkdirSync(this.tokenDir);
    fs.mkdirSync(this.work);
    this.conf = path.join(this.dir, 'softhsm2.conf');
    fs.writeFileSync(this.conf, `directories.tokendir = ${this.tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\n`);
    this.pinFile = path.join(this.work, 'pin');
    fs.writeFileSync(this.pinFile, `${USER_PIN}\n`, { mode: 0o600 });
    this.run('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', SO_PIN, '--pin', USER_PIN]);
  }

  /** The environment a process needs to see this token. */
  get env(): Record<string, string> {
    return { SOFTHSM2_CONF: this.conf };
  }

  run(cmd: string, args: string[], opts: { cwd?: string; input?: string } = {}): string {
    return execFileSync(cmd, args, {
      cwd: opts.cwd ?? this.work,
      env: { ...process.env, ...this.env },
      input: opts.input,
      encoding: 'utf8',
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  }

  /** The three settings (plus the token's environment) for a key of this token. */
  settings(key: IssuedKey, uri?: string): Record<string, string> {
    return {
      ...this.env,
      SIGNING_PKCS11_MODULE: SOFTHSM_MODULE,
      SIGNING_PKCS11_URI: uri ?? `pkcs11:token=${this.label};object=${key.label};type=private?pin-source=file:${this.pinFile}`,
      SIGNING_CERT_CHAIN: key.chainFile,
    };
  }

  private ensureCa(): void {
    if (this.caReady) return;
    // prettier-ignore
    this.run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
      '-subj', '/CN=HSM Test Root/O=Folio Tests', '-days', '30', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    this.caReady = true;
  }

  /** A key pair made by OpenSSL, its certificate issued by the test CA, the key imported into the token and its file removed. */
  issueKey(label: string, spec: KeySpec, opts: { id?: string; extensions?: string; import?: boolean } = {}): IssuedKey {
    this.ensureCa();
    const id = opts.id ?? Buffer.from(label).toString('hex').slice(0, 8);
    const key = path.join(this.work, `${label}.key`);
    const genArgs =
      spec.type === 'rsa'
        ? ['genpkey', '-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${spec.bits}`, '-out', key]
        : ['genpkey', '-algorithm', 'EC', '-pkeyopt', `ec_paramgen_curve:${spec.curve}`, '-out', key];
    this.run('openssl', genArgs);
    this.run('openssl', ['req', '-new', '-key', key, '-subj', `/CN=Folio HSM ${label}/O=Folio Tests`, '-out', `${label}.csr`]);
    fs.writeFileSync(path.join(this.work, `${label}.ext`), `keyUsage=critical,digitalSignature,nonRepudiation\n${opts.extensions ?? ''}\n`);
    // prettier-ignore
    this.run('openssl', ['x509', '-req', '-in', `${label}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${label}.pem`, '-days', '30', '-extfile', `${label}.ext`]);
    const jwk = crypto.createPrivateKey(fs.readFileSync(key)).export({ format: 'jwk' });
    const secret = Buffer.from(jwk.d!, 'base64url');
    if (opts.import !== false) this.importKey(key, label, id);
    const certPem = fs.readFileSync(path.join(this.work, `${label}.pem`), 'utf8');
    const rootPem = fs.readFileSync(path.join(this.work, 'ca.pem'), 'utf8');
    const chainFile = path.join(this.work, `${label}.chain.pem`);
    fs.writeFileSync(chainFile, certPem + rootPem);
    return { chainFile, certPem, rootPem, label, id, secret };
  }

  /** Imports a PEM private key (as PKCS#8) under `label`/`id`, then deletes the key's files: from now on only the token has it. */
  importKey(keyFile: string, label: string, id: string): void {
    const p8 = `${keyFile}.p8`;
    this.run('openssl', ['pkcs8', '-topk8', '-nocrypt', '-in', keyFile, '-out', p8]);
    this.run('softhsm2-util', ['--import', p8, '--token', this.label, '--label', label, '--id', id, '--pin', USER_PIN]);
    fs.rmSync(keyFile);
    fs.rmSync(p8);
  }

  /** Deletes the private key `label` from the token (OpenSC's pkcs11-tool, as an operator would). */
  deleteKey(label: string): void {
    this.run('pkcs11-tool', [
      '--module',
      SOFTHSM_MODULE,
      '--token-label',
      this.label,
      '--login',
      '--pin',
      USER_PIN,
      '--delete-object',
      '--type',
      'privkey',
      '--label',
      label,
    ]);
  }

  /** pkcs11-tool's listing of the token's objects. */
  objects(): string {
    return this.run('pkcs11-tool', ['--module', SOFTHSM_MODULE, '--token-label', this.label, '--login', '--pin', USER_PIN, '--list-objects']);
  }

  /** The token disappears (its directory moved away, as a device unplugged or an unmounted volume). */
  unplug(): void {
    fs.renameSync(this.tokenDir, `${this.tokenDir}.away`);
  }

  plugBack(): void {
    fs.renameSync(`${this.tokenDir}.away`, this.tokenDir);
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Every file under `dir`, recursively, with its bytes. */
export function filesUnder(dir: string): Array<{ file: string; bytes: Buffer }> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push({ file: p, bytes: fs.readFileSync(p) });
  }
  return out;
}

/** A PEM private key of any kind (PKCS#8, encrypted PKCS#8, traditional RSA or EC). */
export const hasPemPrivateKey = (bytes: Buffer): boolean => /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(bytes.toString('latin1'));
