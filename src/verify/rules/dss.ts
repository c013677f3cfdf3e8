/**
 * DSS/VRI rule (PAdES, ISO 32000-2 §12.8.4.3): the Document Security Store holds certificates, OCSP responses
 * and CRLs (/Certs, /OCSPs, /CRLs) and per-signature /VRI entries (/Cert, /OCSP, /CRL, /TU, /TS). Adding or
 * extending it is validation data (SIGNATURES_ONLY); a "DSS" carrying anything else is not validation data.
 */
import { dictOf, type PdfValue } from '../../pdf/index.js';
import type { ModificationLevel } from '../modifications.js';

const DSS_KEYS = new Set(['Type', 'Certs', 'OCSPs', 'CRLs', 'VRI']);
const VRI_ENTRY_KEYS = new Set(['Type', 'Cert', 'OCSP', 'CRL', 'TU', 'TS']);

export function judgeDss(value: PdfValue, isStore: boolean, kind: 'added' | 'changed'): { level: ModificationLevel; issue: string } {
  const d = dictOf(value);
  // A dictionary with /VRI, /OCSPs or /CRLs that is not the catalog's /DSS is judged as a store too.
  const store = isStore || (!!d && (d.map.has('VRI') || d.map.has('OCSPs') || d.map.has('CRLs')));
  const allowed = store ? DSS_KEYS : VRI_ENTRY_KEYS;
  const oddKeys = d ? [...d.map.keys()].filter((k) => !allowed.has(k)) : ['(not a dictionary)'];
  if (oddKeys.length)
    return { level: 'OTHER', issue: `validation data (DSS) ${kind} with entries that are not validation data (${oddKeys.join(', ')})` };
  return { level: 'SIGNATURES_ONLY', issue: `validation data (DSS${store ? '' : ' VRI'}) ${kind}` };
}
