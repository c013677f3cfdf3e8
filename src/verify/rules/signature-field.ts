/**
 * Signature-field rule: a signature field (or its widget) added or changed after signing. Signing it is
 * SIGNATURES_ONLY (a document timestamp's field is part of a long-term-validation update); a /V that is no
 * signature, or an appearance drawn with no signature behind it, is the sneaky-signature attack; other keys
 * changed are OTHER.
 */
import { dictOf, sameValue, type PdfDocument, type ResolvedObject } from '../../pdf/index.js';
import { hasVisibleAppearance } from '../signatures.js';
import type { PushDetail } from '../modifications.js';
import { changedKeys, fieldName } from './shared.js';
import { isDocTimestampField } from './lta.js';

export function classifySigField(
  doc: PdfDocument,
  it: { num: number; a?: ResolvedObject; b?: ResolvedObject; rev: number },
  kind: 'added' | 'changed',
  push: PushDetail,
): void {
  const last = doc.last;
  const b = dictOf(it.b!.value)!;
  const owner = b.map.has('FT') || !b.map.has('Parent') ? b : (doc.dictAt(b.map.get('Parent'), last) ?? b);
  const v = doc.dictAt(owner.map.get('V'), last);
  const signed = !!v && v.map.has('ByteRange');
  const name = fieldName(doc, owner) ?? String(it.num);
  const rev = it.rev;
  if (owner.map.has('V') && !signed) {
    push({ num: it.num, rev }, kind, 'OTHER', `signature field ${name} holds a /V that is not a signature`, {
      attack: 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE',
    });
    return;
  }
  if (!signed && hasVisibleAppearance(doc, b, last)) {
    const a = it.a ? dictOf(it.a.value) : undefined;
    const apChanged = !a || !sameValue(doc.buf, a.map.get('AP') ?? null, b.map.get('AP') ?? null);
    if (apChanged) {
      push({ num: it.num, rev }, kind, 'OTHER', `signature field ${name} shows a signature appearance with no signature behind it`, {
        attack: 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE',
      });
      return;
    }
  }
  if (it.a) {
    const changed = changedKeys(doc, it.a.value, it.b!.value);
    const odd = changed.filter((k) => !['V', 'AP', 'AS', 'Lock', 'SV', 'MK', 'DA', 'F', 'Kids', 'P'].includes(k));
    if (odd.length) {
      push({ num: it.num, rev }, kind, 'OTHER', `signature field ${name} changed (${odd.join(', ')})`);
      return;
    }
  }
  push(
    { num: it.num, rev },
    kind,
    'SIGNATURES_ONLY',
    `signature field ${name} ${signed ? 'signed' : kind}`,
    signed && isDocTimestampField(doc, it.num) ? { ltaUpdate: true } : {},
  );
}

/** An AcroForm update may add signature fields and resources, nothing else. */
