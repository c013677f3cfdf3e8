/**
 * PKCS#11 on the remote-signer interface: SIGNING_PKCS11_MODULE (the library), SIGNING_PKCS11_URI (RFC 7512:
 * which token, which private key, the PIN). Runs only on the key host thread (`key-host-thread.ts`).
 *
 * Binding: `pkcs11js` (PeculiarVentures, MIT), a thin N-API binding of the PKCS#11 C API, built with node-gyp
 * on install. Chosen over `graphene-pk11` (the same authors' object layer on top of pkcs11js) because Folio needs
 * a dozen calls and their raw CKR_ codes: the codes decide between "stop start-up, naming the setting"
 * (CKR_PIN_INCORRECT) and "answer 503 and reconnect" (CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT,
 * CKR_SESSION_HANDLE_INVALID…), and pkcs11js has `C_SignAsync`, which signs on libuv's thread pool so several
 * sessions sign at once. graphene would add its object model and tslib for nothing Folio uses.
 *
 * One library state per process: PKCS#11 keeps C_Initialize and the login per application, not per thread
 * (measured with SoftHSM2 2.6.1: a second worker thread gets CKR_CRYPTOKI_ALREADY_INITIALIZED and
 * CKR_USER_ALREADY_LOGGED_IN), and recovering from a lost token takes C_Finalize + C_Initialize (after its token
 * directory is moved away and back, SoftHSM2 answers C_GetSlotList with CKR_GENERAL_ERROR until re-initialised),
 * which would pull the sessions from under every other thread. So one thread owns the library and a pool of
 * sessions, and engine threads ask it (`channel.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import { TAG, contentBytes, decodeOid, readSingle, tryDer } from '../../crypto/der.js';
import { digestInfo, ecdsaRawToDer } from './encoding.js';
import { parsePkcs11Uri, pinSourcePath, Pkcs11UriError, type Pkcs11Uri } from './pkcs11-uri.js';
import { KeySetupError, KeyUnavailableError, type RemoteKey } from './remote-key.js';
import type { DigestName, NamedCurve, SignatureAlgorithm } from './types.js';

type Handle = Buffer;

export interface Pkcs11KeyOptions {
  /** SIGNING_PKCS11_MODULE: the PKCS#11 library's path. */
  modulePath: string;
  /** SIGNING_PKCS11_URI as written (it may carry pin-value: it stays in this process). */
  uri: string;
  /** What the certificate's public key signs with (the token's key must be of that type and size). */
  algorithm: SignatureAlgorithm;
  /** Sessions kept open at most: as many signatures as this are made at once. */
  sessions: number;
}

const URI = 'SIGNING_PKCS11_URI';
const MODULE = 'SIGNING_PKCS11_MODULE';

const CURVE_OIDS: Record<string, NamedCurve> = {
  '1.2.840.10045.3.1.7': 'P-256',
  '1.3.132.0.34': 'P-384',
  '1.3.132.0.35': 'P-521',
};

/** The CKR_ name of a pkcs11js error (`CKR_PIN_INCORRECT`), or undefined for another error. */
export function ckr(e: unknown): string | undefined {
  const m = e instanceof Error ? /CKR_[A-Z0-9_]+/.exec(e.message) : null;
  return m?.[0];
}

const why = (e: unknown) => ckr(e) ?? (e instanceof Error ? e.message : String(e));

/** A CK_ULONG attribute (pkcs11js gives its native bytes, little-endian on the platforms Node runs on). */
function ulong(value: unknown): bigint | undefined {
  if (!Buffer.isBuffer(value)) return undefined;
  if (value.length === 8) return value.readBigUInt64LE(0);
  if (value.length === 4) return BigInt(value.readUInt32LE(0));
  return undefined;
}

const bool = (value: unknown): boolean => Buffer.isBuffer(value) && value.length > 0 && value[0] !== 0;

/** A blank-padded CK_*_INFO string as written. */
const unpad = (s: string) => s.replace(/[ \0]+$/, '');

const hashMechanism = (hash: DigestName) =>
  ({
    'SHA-256': [pkcs11js.CKM_SHA256, pkcs11js.CKG_MGF1_SHA256],
    'SHA-384': [pkcs11js.CKM_SHA384, pkcs11js.CKG_MGF1_SHA384],
    'SHA-512': [pkcs11js.CKM_SHA512, pkcs11js.CKG_MGF1_SHA512],
  })[hash];

interface Connection {
  slot: Handle;
  key: Handle;
  /** A login per signature (CKA_ALWAYS_AUTHENTICATE, smart cards' signature keys). */
  alwaysAuthenticate: boolean;
  /** Sessions not signing now; `open` counts every session, idle or not. */
  idle: Handle[];
  open: number;
  waiting: Array<{ resolve: (session: Handle) => void; reject: (e: Error) => void }>;
}

export class Pkcs11Key implements RemoteKey {
  private readonly uri: Pkcs11Uri;
  private lib?: pkcs11js.PKCS11;
  private initialised = false;
  private conn?: Connection;
  private pin?: string;
  /** A PIN the token refused while recovering: not tried again until the pin-source file changes (tokens lock after a few). */
  private refusedPin?: string;

  constructor(private readonly options: Pkcs11KeyOptions) {
    try {
      this.uri = parsePkcs11Uri(options.uri);
    } catch (e) {
      throw new KeySetupError(URI, e instanceof Pkcs11UriError ? `is not a valid PKCS#11 URI: ${e.message}` : String(e));
    }
  }

  async open(): Promise<void> {
    const lib = this.load();
    if (!this.initialised) {
      try {
        lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (e) {
        // Another user of the library in this process initialised it already: its state is ours too.
        if (ckr(e) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw new KeyUnavailableError(`C_Initialize failed (${why(e)})`, { cause: e });
      }
      this.initialised = true;
    }
    this.checkLibrary(lib);
    const slot = this.findSlot(lib);
    const session = this.call(() => lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION), 'C_OpenSession');
    try {
      this.login(lib, slot, session);
      const { key, alwaysAuthenticate } = this.findKey(lib, session);
      this.conn = { slot, key, alwaysAuthenticate, idle: [session], open: 1, waiting: [] };
    } catch (e) {
      try {
        lib.C_CloseSession(session);
      } catch {
        // closing a session of a failed open: nothing to keep
      }
      throw e;
    }
  }

  async signDigest(digest: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
    const lib = this.lib;
    const conn = this.conn;
    if (!lib || !conn) throw new KeyUnavailableError('the token is not connected');
    const session = await this.take(lib, conn);
    let broken = false;
    try {
      const { mechanism, input, outLength } = this.mechanismFor(digest, algorithm);
      lib.C_SignInit(session, mechanism, conn.key);
      if (conn.alwaysAuthenticate) lib.C_Login(session, pkcs11js.CKU_CONTEXT_SPECIFIC, this.pin);
      const out = await lib.C_SignAsync(session, input, Buffer.alloc(outLength));
      return algorithm.scheme === 'ECDSA' ? ecdsaRawToDer(out) : new Uint8Array(out);
    } catch (e) {
      broken = true;
      throw new KeyUnavailableError(`the token did not sign (${why(e)})`, { cause: e });
    } finally {
      this.give(conn, session, broken);
    }
  }

  async probe(): Promise<void> {
    const lib = this.lib;
    const conn = this.conn;
    if (!lib || !conn) throw new KeyUnavailableError('the token is not connected');
    // C_GetTokenInfo reaches the token (SoftHSM2 reads its directory: CKR_GENERAL_ERROR once it is gone).
    this.call(() => lib.C_GetTokenInfo(conn.slot), 'C_GetTokenInfo');
    return Promise.resolve();
  }

  async reset(): Promise<void> {
    const lib = this.lib;
    this.failWaiting(this.conn);
    this.conn = undefined;
    if (!lib || !this.initialised) return;
    // C_Finalize closes every session; a library that lost its token is initialised afresh by the next open().
    try {
      lib.C_Finalize();
    } catch {
      // a library that cannot finalise is re-initialised all the same
    }
    this.initialised = false;
    return Promise.resolve();
  }

  async close(): Promise<void> {
    await this.reset();
    try {
      this.lib?.close();
    } catch {
      // unloading at shutdown
    }
    this.lib = undefined;
  }

  private load(): pkcs11js.PKCS11 {
    if (this.lib) return this.lib;
    const file = this.options.modulePath;
    const lib = new pkcs11js.PKCS11();
    try {
      lib.load(file);
    } catch (e) {
      const reason = fs.existsSync(file)
        ? `is not a PKCS#11 library (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`
        : 'does not exist';
      throw new KeySetupError(MODULE, `${file} ${reason}`);
    }
    this.lib = lib;
    return lib;
  }

  /** A PKCS#11 call whose failure means the token cannot be reached. */
  private call<T>(f: () => T, name: string): T {
    try {
      return f();
    } catch (e) {
      throw new KeyUnavailableError(`${name} failed (${why(e)})`, { cause: e });
    }
  }

  /** The URI's library attributes (and module-name/module-path) against the loaded library. */
  private checkLibrary(lib: pkcs11js.PKCS11): void {
    const u = this.uri;
    const base = path.basename(this.options.modulePath).replace(/\.(so|dylib|dll)(\.\d+)*$/, '');
    if (u.modulePath !== undefined && path.resolve(u.modulePath) !== path.resolve(this.options.modulePath))
      throw new KeySetupError(URI, `names module-path ${u.modulePath}, but SIGNING_PKCS11_MODULE is ${this.options.modulePath}`);
    if (u.moduleName !== undefined && u.moduleName !== base)
      throw new KeySetupError(URI, `names module-name ${u.moduleName}, but SIGNING_PKCS11_MODULE is ${this.options.modulePath}`);
    if (u.libraryManufacturer === undefined && u.libraryDescription === undefined && u.libraryVersion === undefined) return;
    const info = this.call(() => lib.C_GetInfo(), 'C_GetInfo');
    const v = info.libraryVersion;
    if (
      (u.libraryManufacturer !== undefined && u.libraryManufacturer !== unpad(info.manufacturerID)) ||
      (u.libraryDescription !== undefined && u.libraryDescription !== unpad(info.libraryDescription)) ||
      (u.libraryVersion !== undefined && (u.libraryVersion.major !== v.major || u.libraryVersion.minor !== v.minor))
    ) {
      throw new KeySetupError(
        URI,
        `names a library other than ${this.options.modulePath} (${unpad(info.manufacturerID)}, ${unpad(info.libraryDescription)} ${v.major}.${v.minor})`,
      );
    }
  }

  private findSlot(lib: pkcs11js.PKCS11): Handle {
    const u = this.uri;
    const slots = this.call(() => lib.C_GetSlotList(true), 'C_GetSlotList');
    const seen: string[] = [];
    const matches = slots.filter((slot) => {
      const token = this.call(() => lib.C_GetTokenInfo(slot), 'C_GetTokenInfo');
      seen.push(`"${unpad(token.label)}"`);
      if (u.token !== undefined && u.token !== unpad(token.label)) return false;
      if (u.manufacturer !== undefined && u.manufacturer !== unpad(token.manufacturerID)) return false;
      if (u.serial !== undefined && u.serial !== unpad(token.serialNumber)) return false;
      if (u.model !== undefined && u.model !== unpad(token.model)) return false;
      if (u.slotId !== undefined && u.slotId !== ulong(slot)) return false;
      if (u.slotDescription !== undefined || u.slotManufacturer !== undefined) {
        const info = this.call(() => lib.C_GetSlotInfo(slot), 'C_GetSlotInfo');
        if (u.slotDescription !== undefined && u.slotDescription !== unpad(info.slotDescription)) return false;
        if (u.slotManufacturer !== undefined && u.slotManufacturer !== unpad(info.manufacturerID)) return false;
      }
      return true;
    });
    if (matches.length === 0) {
      throw new KeySetupError(URI, `names no token of ${this.options.modulePath} (tokens present: ${seen.length ? seen.join(', ') : 'none'})`);
    }
    if (matches.length > 1) throw new KeySetupError(URI, `names ${matches.length} tokens (${seen.join(', ')}): add token= or serial=`);
    return matches[0]!;
  }

  /** The PIN from pin-value or the pin-source file (its one trailing line break dropped). */
  private readPin(): string | undefined {
    const u = this.uri;
    if (u.pinValue !== undefined) return u.pinValue;
    if (u.pinSource === undefined) return undefined;
    let file: string;
    try {
      file = pinSourcePath(u.pinSource);
    } catch (e) {
      throw new KeySetupError(URI, (e as Error).message);
    }
    try {
      return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (e) {
      throw new KeySetupError(URI, `names pin-source ${file}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }

  private login(lib: pkcs11js.PKCS11, slot: Handle, session: Handle): void {
    const token = this.call(() => lib.C_GetTokenInfo(slot), 'C_GetTokenInfo');
    const pin = this.readPin();
    this.pin = pin;
    if ((token.flags & pkcs11js.CKF_LOGIN_REQUIRED) === 0 && pin === undefined) return;
    if (pin === undefined && (token.flags & pkcs11js.CKF_PROTECTED_AUTHENTICATION_PATH) === 0) {
      throw new KeySetupError(URI, `names token "${unpad(token.label)}", which needs a PIN: add pin-source=file:/path/to/pin (or pin-value=)`);
    }
    if (pin !== undefined && pin === this.refusedPin)
      throw new KeySetupError(URI, 'the token refused this PIN before; not tried again until the PIN changes');
    try {
      lib.C_Login(session, pkcs11js.CKU_USER, pin);
      this.refusedPin = undefined;
    } catch (e) {
      const code = ckr(e);
      if (code === 'CKR_USER_ALREADY_LOGGED_IN') return; // the login is the application's, shared by its sessions
      if (code === 'CKR_PIN_INCORRECT' || code === 'CKR_PIN_LEN_RANGE') {
        this.refusedPin = pin;
        throw new KeySetupError(URI, `the token "${unpad(token.label)}" refused the PIN (${code})`);
      }
      if (code === 'CKR_PIN_LOCKED' || code === 'CKR_PIN_EXPIRED')
        throw new KeySetupError(URI, `the token "${unpad(token.label)}" refuses logins (${code})`);
      throw new KeyUnavailableError(`C_Login failed (${why(e)})`, { cause: e });
    }
  }

  private findKey(lib: pkcs11js.PKCS11, session: Handle): { key: Handle; alwaysAuthenticate: boolean } {
    const u = this.uri;
    if (u.type !== undefined && u.type !== 'private')
      throw new KeySetupError(URI, `names type=${u.type}; Folio signs with a private key (type=private)`);
    const template: pkcs11js.Template = [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY }];
    if (u.object !== undefined) template.push({ type: pkcs11js.CKA_LABEL, value: Buffer.from(u.object) });
    if (u.id !== undefined) template.push({ type: pkcs11js.CKA_ID, value: Buffer.from(u.id) });
    const found = this.call(() => {
      lib.C_FindObjectsInit(session, template);
      try {
        return lib.C_FindObjects(session, 2);
      } finally {
        lib.C_FindObjectsFinal(session);
      }
    }, 'C_FindObjects');
    const named = u.object !== undefined || u.id !== undefined ? ` ${this.uri.display.replace(/\?.*$/, '')}` : '';
    if (found.length === 0) throw new KeySetupError(URI, `finds no private key${named} on the token (is the PIN right and the key there?)`);
    if (found.length > 1) throw new KeySetupError(URI, `finds more than one private key${named}: add object= or id= to name one`);
    const key = found[0]!;

    const attrs = this.call(
      () => lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_KEY_TYPE }, { type: pkcs11js.CKA_SIGN }]),
      'C_GetAttributeValue',
    );
    const keyType = ulong(attrs[0]?.value);
    const expected = this.options.algorithm;
    let actual: string;
    if (keyType === BigInt(pkcs11js.CKK_RSA)) {
      const modulus = this.call(() => lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_MODULUS }]), 'C_GetAttributeValue')[0]?.value;
      const bits = Buffer.isBuffer(modulus) ? modulusBits(modulus) : 0;
      if (bits < 2048)
        throw new KeySetupError(URI, `names an RSA key of ${bits} bits; Folio signs with RSA of 2048 bits or more, or ECDSA P-256/P-384/P-521`);
      actual = `RSA-${bits}`;
      if (expected.scheme !== 'ECDSA' && expected.modulusBits === bits) actual = 'match';
    } else if (keyType === BigInt(pkcs11js.CKK_EC)) {
      // Some HSMs keep CKA_EC_PARAMS on the public key object only: without it the certificate's curve stands, and
      // the test signature the key host makes next proves the pair.
      let params: unknown;
      try {
        params = lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_EC_PARAMS }])[0]?.value;
      } catch {
        params = undefined;
      }
      const oid =
        Buffer.isBuffer(params) && params.length > 0 ? tryDer(() => decodeOid(contentBytes(params, readSingle(params, TAG.OID)))) : undefined;
      const curve = oid ? CURVE_OIDS[oid] : undefined;
      if (oid !== undefined && !curve)
        throw new KeySetupError(URI, `names an EC key on curve ${oid}; Folio signs with ECDSA P-256, P-384 or P-521, or RSA`);
      actual = `EC ${curve ?? '(curve not given by the token)'}`;
      if (expected.scheme === 'ECDSA' && (curve === undefined || expected.curve === curve)) actual = 'match';
    } else {
      throw new KeySetupError(URI, `names a key of PKCS#11 type 0x${(keyType ?? -1n).toString(16)}; Folio signs with RSA or ECDSA P-256/P-384/P-521`);
    }
    if (actual !== 'match') {
      const cert = expected.scheme === 'ECDSA' ? `EC ${expected.curve}` : `RSA-${expected.modulusBits}`;
      throw new KeySetupError('SIGNING_CERT_CHAIN', `certifies an ${cert} key, but the token's key is ${actual}`);
    }
    if (!bool(attrs[1]?.value)) throw new KeySetupError(URI, 'names a key the token does not let sign (CKA_SIGN is false)');
    let alwaysAuthenticate = false;
    try {
      alwaysAuthenticate = bool(lib.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_ALWAYS_AUTHENTICATE }])[0]?.value);
    } catch {
      // PKCS#11 2.20 tokens may not know the attribute: no per-signature login
    }
    return { key, alwaysAuthenticate };
  }

  private mechanismFor(digest: Uint8Array, a: SignatureAlgorithm): { mechanism: pkcs11js.Mechanism; input: Buffer; outLength: number } {
    if (a.scheme === 'ECDSA') return { mechanism: { mechanism: pkcs11js.CKM_ECDSA }, input: Buffer.from(digest), outLength: 2 * 66 };
    const outLength = Math.ceil(a.modulusBits / 8);
    // CKM_RSA_PKCS pads what it is given: the DigestInfo (RFC 8017 §9.2) is built here.
    if (a.scheme === 'RSASSA-PKCS1-v1_5')
      return { mechanism: { mechanism: pkcs11js.CKM_RSA_PKCS }, input: Buffer.from(digestInfo(a.hash, digest)), outLength };
    const [hashAlg, mgf] = hashMechanism(a.hash);
    const parameter: pkcs11js.RsaPSS = { type: pkcs11js.CK_PARAMS_RSA_PSS, hashAlg: hashAlg!, mgf: mgf!, saltLen: a.saltLength };
    return {
      mechanism: { mechanism: pkcs11js.CKM_RSA_PKCS_PSS, parameter },
      input: Buffer.from(digest),
      outLength,
    };
  }

  /** A session for one signature: an idle one, a new one while fewer than `sessions` are open, else the next one given back. */
  private take(lib: pkcs11js.PKCS11, conn: Connection): Promise<Handle> {
    const idle = conn.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (conn.open < this.options.sessions) {
      conn.open++;
      try {
        return Promise.resolve(lib.C_OpenSession(conn.slot, pkcs11js.CKF_SERIAL_SESSION));
      } catch (e) {
        conn.open--;
        return Promise.reject(new KeyUnavailableError(`C_OpenSession failed (${why(e)})`, { cause: e }));
      }
    }
    return new Promise((resolve, reject) => conn.waiting.push({ resolve, reject }));
  }

  private give(conn: Connection, session: Handle, broken: boolean): void {
    // A failed operation leaves the session's state unknown and the token probably gone: the host resets the
    // connection, and the signatures waiting for a session fail now rather than after the reset.
    if (broken) {
      conn.open--;
      this.failWaiting(conn);
      return;
    }
    const next = conn.waiting.shift();
    if (next) next.resolve(session);
    else conn.idle.push(session);
  }

  private failWaiting(conn: Connection | undefined): void {
    for (const w of conn?.waiting.splice(0) ?? []) w.reject(new KeyUnavailableError('the token failed while this signature waited for a session'));
  }
}

/** Bits of a big-endian modulus (leading zero octets and bits not counted). */
function modulusBits(modulus: Buffer): number {
  let i = 0;
  while (i < modulus.length && modulus[i] === 0) i++;
  if (i === modulus.length) return 0;
  return (modulus.length - i) * 8 - (Math.clz32(modulus[i]!) - 24);
}
