/**
 * SIGNING_PKCS11_URI is read by RFC 7512's grammar: the RFC's own examples (§3), percent-encoding of text and
 * of the byte-string id, what each component lets through unencoded, and the URIs a consumer must refuse.
 */
import { describe, expect, it } from 'vitest';
import { parsePkcs11Uri, pinSourcePath } from '../../src/sign/signer/pkcs11-uri.js';
import { loadConfig } from '../../src/modules/config.js';

const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('hex');
const text = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString('utf8');

describe("RFC 7512's examples", () => {
  it('pkcs11: names everything', () => {
    const u = parsePkcs11Uri('pkcs11:');
    expect(u.token).toBeUndefined();
    expect(u.object).toBeUndefined();
    expect(u.display).toBe('pkcs11:');
  });

  it('an object and its type, with a PIN file', () => {
    const u = parsePkcs11Uri('pkcs11:object=my-key;type=private?pin-source=file:/etc/token');
    expect(text(u.object)).toBe('my-key');
    expect(u.type).toBe('private');
    expect(u.pinSource).toBe('file:/etc/token');
    expect(pinSourcePath(u.pinSource!)).toBe('/etc/token');
  });

  it('every token attribute, percent-encoded text and a byte-string id, an empty serial', () => {
    const u = parsePkcs11Uri(
      'pkcs11:token=The%20Software%20PKCS%2311%20Softtoken;manufacturer=Snake%20Oil,%20Inc.;model=1.0;object=my-certificate;type=cert;id=%69%95%3E%5C%F4%BD%EC%91;serial=?pin-source=file:/etc/token_pin',
    );
    expect(u.token).toBe('The Software PKCS#11 Softtoken');
    expect(u.manufacturer).toBe('Snake Oil, Inc.');
    expect(u.model).toBe('1.0');
    expect(u.serial).toBe('');
    expect(u.type).toBe('cert');
    expect(hex(u.id)).toBe('69953e5cf4bdec91');
  });

  it('module-name and module-path', () => {
    expect(parsePkcs11Uri('pkcs11:object=my-sign-key;type=private?module-name=mypkcs11').moduleName).toBe('mypkcs11');
    expect(parsePkcs11Uri('pkcs11:object=my-sign-key;type=private?module-path=/mnt/libmypkcs11.so.1').modulePath).toBe('/mnt/libmypkcs11.so.1');
  });

  it('pin-value, left out of the URI shown in logs and errors', () => {
    const u = parsePkcs11Uri('pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.?pin-value=the-pin');
    expect(u.pinValue).toBe('the-pin');
    expect(u.display).toBe('pkcs11:token=Software%20PKCS%2311%20softtoken;manufacturer=Snake%20Oil,%20Inc.');
    expect(u.display).not.toContain('the-pin');
  });

  it('slot and library attributes', () => {
    expect(parsePkcs11Uri('pkcs11:slot-description=Sun%20Metaslot').slotDescription).toBe('Sun Metaslot');
    const lib = parsePkcs11Uri('pkcs11:library-manufacturer=Snake%20Oil,%20Inc.;library-description=Soft%20Token%20Library;library-version=1.23');
    expect(lib.libraryManufacturer).toBe('Snake Oil, Inc.');
    expect(lib.libraryDescription).toBe('Soft Token Library');
    expect(lib.libraryVersion).toEqual({ major: 1, minor: 23 });
    expect(parsePkcs11Uri('pkcs11:library-version=3').libraryVersion).toEqual({ major: 3, minor: 0 });
    expect(parsePkcs11Uri('pkcs11:slot-id=1514366906').slotId).toBe(1514366906n);
  });

  it('"%" and ";" inside a value, mixed-case hex, UTF-8', () => {
    const u = parsePkcs11Uri('pkcs11:token=My%20token%25%20created%20by%20Joe;library-version=3;id=%01%02%03%Ba%dd%Ca%fe%04%05%06');
    expect(u.token).toBe('My token% created by Joe');
    expect(hex(u.id)).toBe('010203baddcafe040506');
    expect(parsePkcs11Uri('pkcs11:token=A%20name%20with%20a%20substring%20%25%3B;object=my-certificate;type=cert').token).toBe(
      'A name with a substring %;',
    );
    expect(parsePkcs11Uri('pkcs11:token=Name%20with%20a%20small%20A%20with%20acute:%20%C3%A1;object=my-certificate;type=cert').token).toBe(
      'Name with a small A with acute: á',
    );
  });

  it('the reserved characters each component lets through unencoded', () => {
    // pk11-path-res-avail includes "&" (not a path delimiter); pk11-query-res-avail "/", "?" and "|".
    expect(parsePkcs11Uri("pkcs11:token=:[]@!$'()*+,=&").token).toBe(":[]@!$'()*+,=&");
    expect(parsePkcs11Uri("pkcs11:token=t?pin-value=:[]@!$'()*+,=/?|").pinValue).toBe(":[]@!$'()*+,=/?|");
    expect(parsePkcs11Uri('pkcs11:token=%3a%5b%5d%40%21%24%27%28%29%2a%2b%2c%26%3d-%60%20%3c%3e%7b').token).toBe(":[]@!$'()*+,&=-` <>{");
    expect(parsePkcs11Uri('pkcs11:object=a=b').object).toEqual(new Uint8Array(Buffer.from('a=b')));
  });
});

describe('what a consumer refuses', () => {
  const refused: Array<[string, RegExp]> = [
    ['pkcs12:token=x', /must start with "pkcs11:"/],
    ['pkcs11:token=a b', /percent-encoded/],
    ['pkcs11:token=a/b', /percent-encoded/],
    ['pkcs11:token=a#b', /percent-encoded/],
    ['pkcs11:token=caf\u00e9', /percent-encoded/],
    ['pkcs11:token=%4', /two hex digits/],
    ['pkcs11:token=%GG', /two hex digits/],
    ['pkcs11:token=%FF%FE', /not UTF-8/],
    ['pkcs11:token=a;token=b', /token appears more than once/],
    ['pkcs11:token=a?pin-value=1&pin-value=2', /pin-value appears more than once/],
    ['pkcs11:token=a?pin-value=1&pin-source=file:/p', /both pin-source and pin-value/],
    ['pkcs11:type=key', /type must be one of/],
    ['pkcs11:library-version=1.x', /library-version/],
    ['pkcs11:slot-id=-1', /slot-id/],
    ['pkcs11:tokn=a', /unknown path attribute tokn/],
    ['pkcs11:token=a?pin=1', /unknown query attribute pin/],
    ['pkcs11:token=a;x-vend-aaa=value-a', /vendor attribute x-vend-aaa/],
    ['pkcs11:token', /not name=value/],
    ['pkcs11:=a', /not name=value/],
  ];
  it.each(refused)('%s', (uri, message) => {
    expect(() => parsePkcs11Uri(uri)).toThrow(message);
  });

  it('pin-source: a file: URI or an absolute path, nothing that runs or reaches another host', () => {
    expect(pinSourcePath('file:///run/secrets/pin')).toBe('/run/secrets/pin');
    expect(pinSourcePath('file://localhost/run/secrets/my%20pin')).toBe('/run/secrets/my pin');
    expect(pinSourcePath('/run/secrets/pin')).toBe('/run/secrets/pin');
    expect(() => pinSourcePath('|/usr/bin/get-pin')).toThrow(/file: URI or an absolute path/);
    expect(() => pinSourcePath('file://pins.example/pin')).toThrow(/another host/);
    expect(() => pinSourcePath('pin.txt')).toThrow(/absolute path/);
  });
});

describe('the settings', () => {
  const base = { DATA_DIR: '/tmp/folio-uri-test' };
  const load = (env: Record<string, string>) => () => loadConfig({ ...base, ...env });

  it('are read together: a URI and a chain with the module, none without it', () => {
    const config = loadConfig({
      ...base,
      SIGNING_PKCS11_MODULE: '/m.so',
      SIGNING_PKCS11_URI: 'pkcs11:token=t;object=k',
      SIGNING_CERT_CHAIN: '/c.pem',
    });
    expect(config.signingPkcs11Uri).toBe('pkcs11:token=t;object=k');
    expect(config.signingRsaPadding).toBe('pkcs1');
    expect(config.signingPreviousCertChain).toEqual([]);
    expect(load({ SIGNING_PKCS11_MODULE: '/m.so', SIGNING_CERT_CHAIN: '/c.pem' })).toThrow(
      /^Invalid configuration: SIGNING_PKCS11_URI must name the key/,
    );
    expect(load({ SIGNING_PKCS11_MODULE: '/m.so', SIGNING_PKCS11_URI: 'pkcs11:token=t' })).toThrow(
      /^Invalid configuration: SIGNING_CERT_CHAIN must name/,
    );
    expect(load({ SIGNING_PKCS11_URI: 'pkcs11:token=t' })).toThrow(
      /^Invalid configuration: SIGNING_PKCS11_URI is set but SIGNING_PKCS11_MODULE is not/,
    );
    expect(load({ SIGNING_CERT_CHAIN: '/c.pem' })).toThrow(/^Invalid configuration: SIGNING_CERT_CHAIN is set but SIGNING_PKCS11_MODULE is not/);
    expect(load({ SIGNING_P12: '/k.p12', SIGNING_PKCS11_MODULE: '/m.so' })).toThrow(
      /^Invalid configuration: SIGNING_PKCS11_MODULE and SIGNING_P12 are both set/,
    );
    expect(load({ SIGNING_RSA_PADDING: 'oaep' })).toThrow(/^Invalid configuration: SIGNING_RSA_PADDING must be one of pkcs1, pss/);
    expect(loadConfig({ ...base, SIGNING_RSA_PADDING: 'PSS' }).signingRsaPadding).toBe('pss');
    expect(loadConfig({ ...base, SIGNING_PREVIOUS_CERT_CHAIN: '/a.pem, /b.pem' }).signingPreviousCertChain).toEqual(['/a.pem', '/b.pem']);
  });

  it('a malformed URI names the attribute, never the PIN', () => {
    const bad = () =>
      loadConfig({
        ...base,
        SIGNING_PKCS11_MODULE: '/m.so',
        SIGNING_PKCS11_URI: 'pkcs11:token=t;bogus=1?pin-value=s3cret',
        SIGNING_CERT_CHAIN: '/c.pem',
      });
    expect(bad).toThrow(/^Invalid configuration: SIGNING_PKCS11_URI is not a valid PKCS#11 URI \(RFC 7512\): unknown path attribute bogus$/);
    expect(bad).not.toThrow(/s3cret/);
  });
});
