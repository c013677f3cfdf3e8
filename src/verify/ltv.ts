/**
 * Long-term validation: reading the Document Security Store (ISO 32000-2 §12.8.4.3, ETSI EN 319 142-1 §5.4)
 * and the PAdES baseline level a signature reaches (ETSI EN 319 142-1 §6):
 * - B-B: ETSI.CAdES.detached, intact, with signed attributes naming the signer certificate (ESS
 *   signing-certificate(-v2));
 * - B-T: plus a valid signature timestamp, or a valid document timestamp over the signature's revision;
 * - B-LT: plus the DSS (document-level or the signature's VRI entry) holding the validation data: every
 *   non-anchor certificate of the path (in the DSS or the CMS) and usable revocation data for the signer
 *   certificate, showing it good at the signing time;
 * - B-LTA: plus a valid document timestamp covering the revision that made the DSS what it is now.
 * Other SubFilters (adbe.pkcs7.detached, …) are not PAdES baseline signatures: level null.
 */
import { X509Certificate } from 'node:crypto';
import { isRef, isStream, type PdfDocument, type PdfValue } from '../pdf/index.js';
import { certificateOf } from './cms.js';
import { MAX_CRL_BYTES, MAX_REVOCATION_ITEMS, type RevocationItem, type RevocationOrigin } from './revocation.js';

export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface DssData {
  certs: X509Certificate[];
  items: RevocationItem[];
  /** VRI entries by upper-case hex SHA-1 of a signature's /Contents. */
  vri: Map<string, { certs: X509Certificate[]; items: RevocationItem[] }>;
  /** 0-based revision that last changed the store's dictionary, VRI or arrays. */
  revision: number;
  /** Entries left out past the bounds. */
  truncated: boolean;
}

const MAX_DSS_CERTS = 256;
const MAX_VRI_ENTRIES = 500;

export function readDss(doc: PdfDocument): DssData | undefined {
  const last = doc.last;
  const catalog = doc.catalogAt(last);
  const dssRaw = catalog?.map.get('DSS');
  const dss = doc.dictAt(dssRaw, last);
  if (!dss) return undefined;
  let revision = 0;
  const touch = (v: PdfValue | undefined) => {
    if (isRef(v)) revision = Math.max(revision, doc.entryAt(v.num, last)?.revision ?? 0);
  };
  const rootRef = doc.trailerAt(last)?.map.get('Root');
  touch(isRef(dssRaw) ? dssRaw : rootRef);
  const out: DssData = { certs: [], items: [], vri: new Map(), revision, truncated: false };
  let budget = MAX_REVOCATION_ITEMS;
  let certBudget = MAX_DSS_CERTS;
  const streams = (v: PdfValue | undefined): Array<{ bytes: Uint8Array; revision: number }> => {
    touch(v);
    const arr = doc.deref(v, last);
    if (!Array.isArray(arr)) return [];
    const res: Array<{ bytes: Uint8Array; revision: number }> = [];
    for (const x of arr) {
      touch(x);
      const s = doc.deref(x, last);
      if (!isStream(s)) continue;
      try {
        res.push({ bytes: doc.decode(s, MAX_CRL_BYTES), revision: isRef(x) ? (doc.entryAt(x.num, last)?.revision ?? 0) : revision });
      } catch {
        out.truncated = true; // too large or undecodable: left out
      }
    }
    return res;
  };
  const certsOf = (v: PdfValue | undefined) =>
    streams(v).flatMap(({ bytes }) => {
      if (certBudget-- <= 0) {
        out.truncated = true;
        return [];
      }
      try {
        return [certificateOf(bytes)];
      } catch {
        return [];
      }
    });
  const itemsOf = (v: PdfValue | undefined, type: 'OCSP' | 'CRL', origin: RevocationOrigin) =>
    streams(v).flatMap(({ bytes, revision: rev }): RevocationItem[] => {
      if (budget-- <= 0) {
        out.truncated = true;
        return [];
      }
      return [{ type, origin, der: bytes, revision: rev }];
    });
  out.certs = certsOf(dss.map.get('Certs'));
  out.items = [...itemsOf(dss.map.get('OCSPs'), 'OCSP', 'DSS'), ...itemsOf(dss.map.get('CRLs'), 'CRL', 'DSS')];
  touch(dss.map.get('VRI'));
  const vri = doc.dictAt(dss.map.get('VRI'), last);
  let n = 0;
  for (const [key, v] of vri?.map ?? []) {
    if (++n > MAX_VRI_ENTRIES) {
      out.truncated = true;
      break;
    }
    touch(v);
    const e = doc.dictAt(v, last);
    if (!e) continue;
    out.vri.set(key.toUpperCase(), {
      certs: certsOf(e.map.get('Cert')),
      items: [...itemsOf(e.map.get('OCSP'), 'OCSP', 'VRI'), ...itemsOf(e.map.get('CRL'), 'CRL', 'VRI')],
    });
  }
  out.revision = revision;
  return out;
}

export interface LevelFacts {
  subFilter: string | null;
  intact: boolean;
  essSigningCertificate: boolean;
  signatureTimestampValid: boolean;
  /** 0-based revision the signature covers. */
  signedRevision: number;
  /** Non-anchor certificates of the path are all in the DSS/VRI or the CMS. */
  chainInLtvData: boolean;
  /**
   * 0-based revision that added the DSS/VRI revocation data showing the signer good at the signing time;
   * undefined when the DSS holds none.
   */
  ltvRevision?: number;
}

/** `docTimestamps`: the revision (0-based) each valid document timestamp covers. */
export function padesLevel(f: LevelFacts, docTimestamps: number[]): PadesLevel | null {
  if (f.subFilter !== 'ETSI.CAdES.detached' || !f.intact || !f.essSigningCertificate) return null;
  const laterTs = docTimestamps.filter((r) => r > f.signedRevision);
  if (!f.signatureTimestampValid && laterTs.length === 0) return 'B-B';
  if (f.ltvRevision === undefined || !f.chainInLtvData) return 'B-T';
  const covering = f.ltvRevision;
  return laterTs.some((r) => r >= covering) ? 'B-LTA' : 'B-LT';
}
