/**
 * Public surface of the annotate capability: fill a DOCX template's fields (content controls and
 * `{{placeholders}}`) with values and report what was and was not filled; list a template's fields.
 * No HTTP here: src/http/routes/annotate.ts validates the request shape and calls these.
 */
import { FolioError, type ErrorDetail } from '../errors.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { TemplateDocument } from './document.js';
import { describeField, fieldLabel, findFields, PLACEHOLDER_RE, type ControlField, type FieldDescription, type TemplateField } from './fields.js';
import { Filler } from './fill.js';
import { paragraphText } from './placeholder-text.js';
import { resolveValue } from './values.js';
import { child, isAttached, unwrapAll, type XElement } from '../docx/xml.js';
import { FIELD_TYPES, type AnnotateField, type AnnotateReport, type FilledEntry, type ResolvedValue } from './types.js';

export type { AnnotateField, AnnotateReport, FieldOptions, FieldType, FilledEntry } from './types.js';
export type { FieldDescription } from './fields.js';
export { FIELD_TYPES } from './types.js';

export interface AnnotateOptions {
  /** Replace every content control of the result by its content (a final document, no longer a template). */
  flatten?: boolean;
  /** A request id/group that matches nothing is a 422 instead of a line in `report.unmatched`. */
  strict?: boolean;
  /** Fetches image URLs (docs/api.md § Common rules rules); without it image URLs are refused. */
  fetcher?: SafeFetcher;
}

export interface AnnotateResult {
  docx: Uint8Array;
  report: AnnotateReport;
}

/** Fields per request (as the HTTP schema's maxItems). */
export const MAX_REQUEST_FIELDS = 5_000;

const keyOf = (f: AnnotateField) => (f.id !== undefined ? `id:${f.id}` : `group:${f.group}`);
const nameOf = (f: AnnotateField) => (f.id !== undefined ? f.id : f.group!);

/** Request checks the JSON schema cannot express well; 400 with every offending field listed. */
function checkShape(fields: AnnotateField[]): void {
  // The HTTP schema says the same (maxItems); the engine holds to it for every caller.
  if (fields.length > MAX_REQUEST_FIELDS) {
    throw new FolioError('VALIDATION_ERROR', `At most ${MAX_REQUEST_FIELDS} fields per request`, {
      details: [{ field: 'fields', issue: `more than ${MAX_REQUEST_FIELDS} items` }],
    });
  }
  const details: ErrorDetail[] = [];
  fields.forEach((f, i) => {
    const hasId = typeof f.id === 'string';
    const hasGroup = typeof f.group === 'string';
    if (hasId === hasGroup) details.push({ field: `fields[${i}]`, issue: 'exactly one of id and group is required' });
    if (!FIELD_TYPES.includes(f.type)) details.push({ field: `fields[${i}].type`, issue: `must be one of ${FIELD_TYPES.join(', ')}` });
  });
  if (details.length) throw new FolioError('VALIDATION_ERROR', 'The fields are invalid', { details });
}

/** The template's fields by every key a request can use (a request may hold thousands of fields). */
class FieldIndex {
  private readonly byId = new Map<string, ControlField[]>();
  private readonly byTag = new Map<string, ControlField[]>();
  private readonly byAlias = new Map<string, ControlField[]>();
  private readonly byGroup = new Map<string, ControlField[]>();
  private readonly byName = new Map<string, TemplateField[]>();

  constructor(all: TemplateField[]) {
    const add = <T>(map: Map<string, T[]>, key: string | undefined, v: T) => {
      if (key === undefined) return;
      const list = map.get(key);
      if (list) list.push(v);
      else map.set(key, [v]);
    };
    for (const f of all) {
      if (f.kind === 'placeholder') {
        add(this.byName, f.name, f);
        continue;
      }
      add(this.byId, f.id, f);
      add(this.byTag, f.key, f);
      if (f.tag !== f.key) add(this.byTag, f.tag, f);
      add(this.byAlias, f.alias, f);
      add(this.byGroup, f.group, f);
    }
  }

  match(f: AnnotateField): TemplateField[] {
    if (f.group !== undefined) return this.byGroup.get(f.group) ?? [];
    const id = f.id!;
    // docs/api.md § Annotate order: the control's w:id, then its tag (plain or JSON fieldId), then its alias; `{{id}}`
    // placeholders are a separate syntax and are always filled with the same value.
    const byId = this.byId.get(id);
    if (byId) return byId;
    const controls = this.byTag.get(id) ?? this.byAlias.get(id) ?? [];
    return [...controls, ...(this.byName.get(id) ?? [])];
  }
}

export async function annotateDocx(template: Uint8Array, fields: AnnotateField[], options: AnnotateOptions = {}): Promise<AnnotateResult> {
  checkShape(fields);
  const doc = TemplateDocument.read(template);
  const warnings: string[] = [];

  // Duplicate ids/groups in the request: the last one wins (as a later assignment would).
  const lastIndex = new Map<string, number>();
  fields.forEach((f, i) => {
    const k = keyOf(f);
    const prev = lastIndex.get(k);
    if (prev !== undefined)
      warnings.push(`fields[${prev}] and fields[${i}] both target ${f.id !== undefined ? 'id' : 'group'} "${nameOf(f)}"; fields[${i}] was used`);
    lastIndex.set(k, i);
  });

  const ctx = { fetcher: options.fetcher, tableCells: { used: 0 } };
  const values: Array<ResolvedValue | undefined> = [];
  for (let i = 0; i < fields.length; i++) {
    values.push(lastIndex.get(keyOf(fields[i]!)) === i ? await resolveValue(fields[i]!, i, ctx) : undefined);
  }

  const found = findFields(doc.fieldParts);
  const index = new FieldIndex(found);
  const filler = new Filler(doc, warnings);
  const filled: FilledEntry[] = [];
  const unmatched: string[] = [];
  const reached = new Set<TemplateField>();
  const toFlatten: Array<{ sdt: XElement; part: string }> = [];

  for (let i = 0; i < fields.length; i++) {
    const value = values[i];
    if (!value) continue;
    const f = fields[i]!;
    const targets = index.match(f);
    let occurrences = 0;
    let replacedEarlier = 0;
    for (const t of targets) {
      reached.add(t);
      const root = t.part.doc.root;
      if (t.kind === 'control') {
        if (!isAttached(t.sdt, root)) {
          replacedEarlier++;
          continue;
        }
        filler.fillControl(t, value, f.options ?? {}, `fields[${i}]`);
        if (!t.shadow) occurrences++;
        // A temporary control (w:temporary) is one Word removes once its content is edited: filling is an edit.
        const sdtPr = child(t.sdt, 'w:sdtPr');
        if (f.options?.flatten || (sdtPr && child(sdtPr, 'w:temporary'))) toFlatten.push({ sdt: t.sdt, part: t.part.name });
      } else {
        if (!isAttached(t.paragraph, root)) continue;
        const n = filler.fillPlaceholder(t, value, f.options ?? {}, `fields[${i}]`);
        if (!t.shadow) occurrences += n;
      }
    }
    if (occurrences > 0) filled.push({ id: nameOf(f), type: f.type, occurrences });
    else if (replacedEarlier > 0) warnings.push(`fields[${i}] ("${nameOf(f)}") is inside content an earlier field replaced; not filled`);
    else unmatched.push(nameOf(f));
  }

  if (options.strict && unmatched.length) {
    const unmatchedSet = new Set(unmatched);
    throw new FolioError('VALIDATION_ERROR', `${unmatched.length} field(s) of the request match nothing in the template`, {
      status: 422,
      details: fields
        .map((f, i) => ({ f, i }))
        .filter(({ f, i }) => lastIndex.get(keyOf(f)) === i && unmatchedSet.has(nameOf(f)))
        .map(({ f, i }) => ({ field: `fields[${i}].${f.id !== undefined ? 'id' : 'group'}`, issue: 'matches no field in the template' })),
    });
  }

  // Unfilled: fields no request reached that are still in the document (not inside a filled control).
  const unfilled = new Set<string>();
  const namesLeft = new Map<XElement, Set<string>>();
  for (const t of found) {
    if (reached.has(t) || t.shadow) continue;
    if (t.kind === 'control' && (t.control === 'docPartObj' || t.control === 'repeatingSectionItem' || t.control === 'group')) continue;
    if (!isAttached(t.kind === 'control' ? t.sdt : t.paragraph, t.part.doc.root)) continue;
    if (t.kind === 'placeholder') {
      // The paragraph's placeholders are read once (a fill elsewhere in it may have changed its text).
      let names = namesLeft.get(t.paragraph);
      if (!names) {
        names = new Set([...paragraphText(t.paragraph).matchAll(PLACEHOLDER_RE)].map((m) => m[1]!));
        namesLeft.set(t.paragraph, names);
      }
      if (!names.has(t.name)) continue;
    }
    unfilled.add(fieldLabel(t));
  }

  if (options.flatten) {
    for (const part of doc.fieldParts) {
      if (unwrapAll(part.doc.root, 'w:sdt', 'w:sdtContent')) doc.markDirty(part.name);
    }
  } else {
    for (const { sdt, part } of toFlatten) {
      if (!sdt.parent) continue;
      Filler.flatten(sdt);
      doc.markDirty(part);
    }
  }

  return { docx: doc.toBytes(), report: { filled, unmatched, unfilled: [...unfilled], warnings } };
}

/** The fields of a template (POST /v1/annotate/fields): controls one by one, placeholders once per part. */
export function listTemplateFields(template: Uint8Array): Array<FieldDescription & { occurrences: number }> {
  const doc = TemplateDocument.read(template);
  const out: Array<FieldDescription & { occurrences: number }> = [];
  const placeholderIndex = new Map<string, FieldDescription & { occurrences: number }>();
  for (const f of findFields(doc.fieldParts)) {
    if (f.shadow) continue;
    if (f.kind === 'control' && child(f.sdt, 'w:sdtPr') === undefined && !f.id) continue;
    const d = describeField(f);
    if (f.kind === 'placeholder') {
      const k = `${f.part.name}\u0000${f.name}`;
      const prev = placeholderIndex.get(k);
      if (prev) {
        prev.occurrences += f.count;
        continue;
      }
      const entry = { ...d, occurrences: f.count };
      placeholderIndex.set(k, entry);
      out.push(entry);
    } else out.push({ ...d, occurrences: 1 });
  }
  return out;
}
