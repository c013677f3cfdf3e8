/**
 * Fetching user-supplied URLs (docs/api.md § Common rules): http(s) only, 15 s, at most 3 redirects, 25 MB, and never an
 * internal address. The address check runs on the IPs that DNS returned, inside the connection's own
 * lookup, so a hostname cannot resolve to a public address for the check and a private one for the
 * connection; each redirect goes through the same path.
 */
import dns from 'node:dns';
import net from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { FolioError } from '../errors.js';

export interface SafeFetchOptions {
  /** `host:port` entries that may be reached even when internal (URL_FETCH_ALLOWLIST). */
  allowlist?: string[];
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface FetchedResource {
  bytes: Uint8Array;
  contentType?: string;
  finalUrl: string;
}

/** True for loopback, private, link-local, CGNAT, multicast, unspecified, documentation and other non-public ranges. */
export function isInternalAddress(ip: string): boolean {
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number) as [number, number, number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  const groups = ipv6Groups(ip);
  if (!groups) return true; // Neither v4 nor v6: refuse rather than guess.
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeroTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  // Addresses that carry an IPv4 address, in every spelling (the groups are parsed, not the text): the
  // embedded address decides, since that is where a translator or the kernel delivers the packets.
  if (zeroTo(5) && g5 === 0xffff) return isInternalAddress(v4(g6, g7)); // ::ffff:0:0/96, IPv4-mapped
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return isInternalAddress(v4(g6, g7)); // ::ffff:0:0:0/96, SIIT
  // ::/96, IPv4-compatible (deprecated; Linux may route it to the embedded address) — also :: and ::1.
  if (zeroTo(6)) return true;
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isInternalAddress(v4(g6, g7)); // NAT64 64:ff9b::/96
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return true; // 64:ff9b:1::/48, local-use NAT64
  if (g0 === 0x2002) return isInternalAddress(v4(g1, g2)); // 6to4 2002::/16
  if (g0 === 0x2001 && g1 === 0) return true; // Teredo 2001::/32: tunnels to a v4 address we cannot vet
  return (
    (g0 & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (g0 & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (g0 & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated)
    (g0 & 0xff00) === 0xff00 || // multicast
    (g0 === 0x2001 && g1 === 0xdb8) || // documentation
    (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) // discard-only 100::/64
  );
}

/** The eight 16-bit groups of an IPv6 address (any spelling: `::`, embedded dotted quad, zone id), or undefined. */
export function ipv6Groups(ip: string): number[] | undefined {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!net.isIPv6(text)) return undefined;
  let head = text;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(head);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    head = head.slice(0, dotted.index);
    // "::1.2.3.4" leaves "::", "::ffff:1.2.3.4" leaves "::ffff:": drop the separator before the quad.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  let groups: number[];
  const gap = head.indexOf('::');
  if (gap >= 0) {
    const left = parse(head.slice(0, gap));
    const right = [...parse(head.slice(gap + 2)), ...tail];
    groups = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  } else {
    groups = [...parse(head), ...tail];
  }
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

export class SafeFetcher {
  private readonly allow: Set<string>;
  private readonly maxBytes: number;
  private readonly timeoutMs: number;
  private readonly maxRedirects: number;
  private readonly agent: Agent;

  constructor(options: SafeFetchOptions = {}) {
    this.allow = new Set((options.allowlist ?? []).map((s) => s.toLowerCase()));
    this.maxBytes = options.maxBytes ?? 25 * 1024 * 1024;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxRedirects = options.maxRedirects ?? 3;
    this.agent = new Agent({
      connect: {
        timeout: this.timeoutMs,
        lookup: (hostname, opts, callback) => {
          dns.lookup(hostname, { all: true, family: (opts as dns.LookupOptions).family ?? 0 }, (err, addresses) => {
            if (err) return callback(err, '', 4);
            const list = addresses as dns.LookupAddress[];
            const port = (opts as { port?: number }).port;
            const bad = list.find((a) => isInternalAddress(a.address) && !this.isAllowed(hostname, a.address, port));
            if (bad || list.length === 0) {
              const e = new Error(`address ${bad?.address ?? '?'} is internal`) as NodeJS.ErrnoException;
              e.code = 'FOLIO_URL_NOT_ALLOWED';
              return callback(e, '', 4);
            }
            const first = list[0]!;
            if ((opts as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
            callback(null, first.address, first.family);
          });
        },
      },
    });
  }

  private isAllowed(host: string, ip: string, port?: number): boolean {
    if (this.allow.size === 0) return false;
    const p = port ?? '';
    return this.allow.has(`${host.toLowerCase()}:${p}`) || this.allow.has(`${ip}:${p}`) || this.allow.has(`[${ip}]:${p}`);
  }

  /** Refuses before any connection when the URL is not http(s) or names an internal IP literal. */
  private checkUrl(raw: string, field: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FolioError('VALIDATION_ERROR', `${field} is not a valid URL`, { details: [{ field, issue: 'invalid URL' }] });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FolioError('URL_NOT_ALLOWED', `${field} must be an http(s) URL`, { details: [{ field, issue: 'scheme not allowed' }] });
    }
    if (url.username || url.password) {
      throw new FolioError('URL_NOT_ALLOWED', `${field} must not carry credentials`, { details: [{ field, issue: 'credentials in URL' }] });
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (net.isIP(host) && isInternalAddress(host) && !this.isAllowed(host, host, port)) {
      throw new FolioError('URL_NOT_ALLOWED', `${field} points at an internal address`, { details: [{ field, issue: 'internal address' }] });
    }
    if (/^(localhost|.*\.localhost|.*\.internal|.*\.local)$/i.test(host) && !this.isAllowed(host, host, port)) {
      throw new FolioError('URL_NOT_ALLOWED', `${field} points at an internal host`, { details: [{ field, issue: 'internal host' }] });
    }
    return url;
  }

  async fetch(raw: string, field = 'document.url'): Promise<FetchedResource> {
    let url = this.checkUrl(raw, field);
    const deadline = Date.now() + this.timeoutMs;
    for (let hop = 0; ; hop++) {
      let res: Awaited<ReturnType<typeof undiciRequest>>;
      try {
        res = await undiciRequest(url, {
          method: 'GET',
          dispatcher: this.agent,
          headersTimeout: Math.max(1, deadline - Date.now()),
          bodyTimeout: Math.max(1, deadline - Date.now()),
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
          headers: { 'user-agent': 'Folio/0.9 (+document fetch)', accept: '*/*' },
        });
      } catch (e) {
        if (hasCode(e, 'FOLIO_URL_NOT_ALLOWED')) {
          throw new FolioError('URL_NOT_ALLOWED', `${field} resolves to an internal address`, { details: [{ field, issue: 'internal address' }] });
        }
        if (isTimeout(e)) throw this.timedOut(field);
        throw new FolioError('URL_FETCH_FAILED', `${field} could not be fetched: ${describe(e)}`, { details: [{ field, issue: 'fetch failed' }] });
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump().catch(() => undefined);
        if (hop >= this.maxRedirects) {
          throw new FolioError('URL_FETCH_FAILED', `${field}: more than ${this.maxRedirects} redirects`, {
            details: [{ field, issue: 'too many redirects' }],
          });
        }
        url = this.checkUrl(new URL(String(res.headers.location), url).toString(), field);
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        throw new FolioError('URL_FETCH_FAILED', `${field} answered HTTP ${res.statusCode}`, {
          details: [{ field, issue: `HTTP ${res.statusCode}` }],
        });
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > this.maxBytes) {
        res.body.destroy();
        throw new FolioError('FILE_TOO_LARGE', `${field} is larger than 25 MB`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > this.maxBytes) {
            res.body.destroy();
            throw new FolioError('FILE_TOO_LARGE', `${field} is larger than 25 MB`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (e) {
        if (e instanceof FolioError) throw e;
        if (isTimeout(e)) throw this.timedOut(field);
        throw new FolioError('URL_FETCH_FAILED', `${field} could not be read: ${describe(e)}`, { details: [{ field, issue: 'read failed' }] });
      }
      const ct = res.headers['content-type'];
      return { bytes: new Uint8Array(Buffer.concat(chunks)), contentType: typeof ct === 'string' ? ct : undefined, finalUrl: url.toString() };
    }
  }

  private timedOut(field: string): FolioError {
    const seconds = Math.round(this.timeoutMs / 100) / 10;
    return new FolioError('URL_FETCH_FAILED', `${field} could not be fetched: timed out after ${seconds} s`, {
      details: [{ field, issue: 'timed out' }],
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function hasCode(e: unknown, code: string): boolean {
  for (let cur = e as { code?: string; cause?: unknown } | undefined, i = 0; cur && i < 5; cur = cur.cause as typeof cur, i++) {
    if (cur.code === code) return true;
  }
  return false;
}

/** The deadline's AbortSignal (a DOMException whose legacy numeric code is 23) or one of undici's own timers. */
function isTimeout(e: unknown): boolean {
  for (let cur = e as { name?: string; code?: unknown; cause?: unknown } | undefined, i = 0; cur && i < 5; cur = cur.cause as typeof cur, i++) {
    if (cur.name === 'TimeoutError') return true;
    if (
      cur.code === 'UND_ERR_HEADERS_TIMEOUT' ||
      cur.code === 'UND_ERR_BODY_TIMEOUT' ||
      cur.code === 'UND_ERR_CONNECT_TIMEOUT' ||
      cur.code === 'ETIMEDOUT'
    )
      return true;
  }
  return false;
}

/** A short reason: a system or undici error code (ECONNREFUSED, UND_ERR_SOCKET), else the message. */
function describe(e: unknown): string {
  const err = e as { code?: unknown; message?: string; cause?: { code?: unknown } };
  // DOMException codes are numbers (e.g. 20 for an abort): meaningless to a client.
  const code = [err.cause?.code, err.code].find((c): c is string => typeof c === 'string');
  return code ?? err.message ?? 'error';
}
