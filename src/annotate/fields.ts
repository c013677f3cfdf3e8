/**
 * The field finder: Word content controls (w:sdt at inline, block, row and cell level, nested too) and
 * `{{name}}` text placeholders, in the body, headers, footers, footnotes and endnotes.
 *
 * A placeholder is found on the text of a whole paragraph: Word splits typed text into several runs (spell
 * checking marks, revision ids, bookmarks, a format change in the middle), so the visible text of every
 * w:t of the paragraph is joined first and the placeholder located there; fill.ts maps the match back to
 * the runs. Deleted text (w:del), field codes (w:instrText) and nested text boxes are not part of the
 * paragraph's text. The VML fallback copy of a text box (mc:Fallback) is filled too but not counted.
 */
import { FolioError } from '../errors.js';
import type { FieldPart, PartLocation } from './document.js';
import { attr, child, textContent, walk, type XElement } from '../docx/xml.js';

export type ControlKind =
  | 'richText'
  | 'text'
  | 'picture'
  | 'date'
  | 'checkbox'
  | 'dropDownList'
  | 'comboBox'
  | 'repeatingSection'
  | 'repeatingSectionItem'
  | 'docPartObj'
  | 'group'
  | 'other';

export type ControlLevel = 'inline' | 'block' | 'row' | 'cell';

export interface ControlField {
  kind: 'control';
  part: FieldPart;
  sdt: XElement;
  /** w:id/@w:val */
  id?: string;
  /** w:tag/@w:val as written (a JSON string for SuperDoc fields). */
  tag?: string;
  /** fieldId of a JSON tag, else the plain tag. */
  key?: string;
  group?: string;
  alias?: string;
  control: ControlKind;
  level: ControlLevel;
  /** SuperDoc's JSON tag names the field type (fieldType/fieldTypeShort). */
  declaredType?: string;
  /** Inside mc:Fallback (a VML copy of a text box): filled, not reported. */
  shadow: boolean;
}

export interface PlaceholderField {
  kind: 'placeholder';
  part: FieldPart;
  name: string;
  paragraph: XElement;
  /** How many times the name occurs in this paragraph. */
  count: number;
  shadow: boolean;
}

export type TemplateField = ControlField | PlaceholderField;

/** `{{ name }}`: a simple name (letters, digits, _, ., -); Jinja statements and filters are not placeholders. */
export const PLACEHOLDER_RE = /\{\{\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*\}\}/gu;

/** Elements whose text is not the paragraph's own visible text. */
const NOT_PARAGRAPH_TEXT = new Set(['w:del', 'w:instrText', 'w:delInstrText', 'w:txbxContent', 'w:p', 'mc:Fallback', 'w:moveFrom']);

export interface TextSegment {
  /** The w:t element. */
  t: XElement;
  run: XElement;
  text: string;
  start: number;
}

/** The w:t elements that make up a paragraph's visible text, in order, with their offsets. */
export function paragraphSegments(p: XElement): TextSegment[] {
  const segs: TextSegment[] = [];
  let pos = 0;
  walk(p, (e) => {
    if (e !== p && NOT_PARAGRAPH_TEXT.has(e.name)) return 'skip';
    if (e.name === 'w:t' && e.parent?.name === 'w:r') {
      const text = textContent(e);
      segs.push({ t: e, run: e.parent, text, start: pos });
      pos += text.length;
      return 'skip';
    }
    return undefined;
  });
  return segs;
}

function controlKind(sdtPr: XElement | undefined): ControlKind {
  if (!sdtPr) return 'richText';
  for (const c of sdtPr.children) {
    if (c.type !== 'el') continue;
    switch (c.name) {
      case 'w:text':
        return 'text';
      case 'w:richText':
        return 'richText';
      case 'w:picture':
        return 'picture';
      case 'w:date':
        return 'date';
      case 'w14:checkbox':
        return 'checkbox';
      case 'w:dropDownList':
        return 'dropDownList';
      case 'w:comboBox':
        return 'comboBox';
      case 'w15:repeatingSection':
        return 'repeatingSection';
      case 'w15:repeatingSectionItem':
        return 'repeatingSectionItem';
      case 'w:docPartObj':
      case 'w:docPartList':
        return 'docPartObj';
      case 'w:group':
        return 'group';
      case 'w:citation':
      case 'w:bibliography':
      case 'w:equation':
        return 'other';
      default:
        break;
    }
  }
  return 'richText';
}

const BLOCK_PARENTS = new Set(['w:body', 'w:tc', 'w:txbxContent', 'w:hdr', 'w:ftr', 'w:footnote', 'w:endnote', 'w:comment', 'w:docPartBody']);

function controlLevel(sdt: XElement): ControlLevel {
  const content = child(sdt, 'w:sdtContent');
  if (content) {
    for (const c of content.children) {
      if (c.type !== 'el') continue;
      if (c.name === 'w:p' || c.name === 'w:tbl') return 'block';
      if (c.name === 'w:tr') return 'row';
      if (c.name === 'w:tc') return 'cell';
      if (c.name === 'w:r' || c.name === 'w:hyperlink') return 'inline';
    }
  }
  // Empty content: the parent tells (a control in w:sdtContent inherits its parent control's level).
  let parent = sdt.parent;
  while (parent && parent.name === 'w:sdtContent') parent = parent.parent?.parent;
  if (!parent) return 'block';
  if (parent.name === 'w:tbl') return 'row';
  if (parent.name === 'w:tr') return 'cell';
  return BLOCK_PARENTS.has(parent.name) ? 'block' : 'inline';
}

function parseJsonTag(tag: string): { fieldId?: string; group?: string; type?: string } | undefined {
  const t = tag.trim();
  if (!t.startsWith('{') || t.length > 10_000) return undefined;
  try {
    const v = JSON.parse(t) as Record<string, unknown>;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    const str = (x: unknown) => (typeof x === 'string' || typeof x === 'number' ? String(x) : undefined);
    return { fieldId: str(v.fieldId), group: str(v.group), type: str(v.fieldType) ?? str(v.fieldTypeShort) };
  } catch {
    return undefined;
  }
}

function isShadow(e: XElement): boolean {
  for (let p = e.parent; p; p = p.parent) if (p.name === 'mc:Fallback') return true;
  return false;
}

export function describeControl(part: FieldPart, sdt: XElement): ControlField {
  const sdtPr = child(sdt, 'w:sdtPr');
  const val = (name: string) => {
    const e = sdtPr && child(sdtPr, name);
    return e ? attr(e, 'w:val') : undefined;
  };
  const id = val('w:id');
  const tag = val('w:tag') || undefined;
  const alias = val('w:alias') || undefined;
  const json = tag ? parseJsonTag(tag) : undefined;
  return {
    kind: 'control',
    part,
    sdt,
    id,
    tag,
    key: json ? json.fieldId : tag,
    group: json?.group,
    alias,
    control: controlKind(sdtPr),
    level: controlLevel(sdt),
    declaredType: json?.type,
    shadow: isShadow(sdt),
  };
}

/**
 * Fields (controls, and placeholder occurrences) one template may hold. Every field is matched, filled and
 * reported one by one; real templates hold hundreds, a large form a few thousand.
 */
export const MAX_TEMPLATE_FIELDS = 25_000;

/** Every field of every searched part, in document order per part. */
export function findFields(parts: FieldPart[]): TemplateField[] {
  const out: TemplateField[] = [];
  let occurrences = 0;
  const tooMany = () =>
    new FolioError(
      'UNPROCESSABLE_DOCUMENT',
      `The template has more than ${MAX_TEMPLATE_FIELDS} fields (content controls and placeholders); at most ${MAX_TEMPLATE_FIELDS} are supported`,
    );
  for (const part of parts) {
    walk(part.doc.root, (e) => {
      if (e.name === 'w:sdt') {
        if (++occurrences > MAX_TEMPLATE_FIELDS) throw tooMany();
        out.push(describeControl(part, e));
      } else if (e.name === 'w:p') {
        const segs = paragraphSegments(e);
        if (segs.length === 0) return undefined;
        const text = segs.length === 1 ? segs[0]!.text : segs.map((s) => s.text).join('');
        if (!text.includes('{{')) return undefined;
        const counts = new Map<string, number>();
        for (const m of text.matchAll(PLACEHOLDER_RE)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
        const shadow = isShadow(e);
        for (const [name, count] of counts) {
          occurrences += count;
          if (occurrences > MAX_TEMPLATE_FIELDS) throw tooMany();
          out.push({ kind: 'placeholder', part, name, paragraph: e, count, shadow });
        }
      }
      return undefined;
    });
  }
  return out;
}

/** The fill type a form builder would use for a field. */
export function fieldType(f: TemplateField): string {
  if (f.kind === 'placeholder') return 'text';
  const declared = f.declaredType?.toLowerCase();
  if (declared && ['text', 'image', 'signature', 'checkbox', 'html', 'link', 'date', 'table'].includes(declared)) return declared;
  switch (f.control) {
    case 'picture':
      return 'image';
    case 'date':
      return 'date';
    case 'checkbox':
      return 'checkbox';
    case 'repeatingSection':
      return 'table';
    case 'docPartObj':
    case 'group':
    case 'other':
    case 'repeatingSectionItem':
      return 'other';
    default: {
      const content = child(f.sdt, 'w:sdtContent');
      return content && content.children.some((c) => c.type === 'el' && c.name === 'w:tbl') ? 'table' : 'text';
    }
  }
}

/** The name a field is reported under: placeholder name, fieldId/tag, alias, else w:id. */
export function fieldLabel(f: TemplateField): string {
  if (f.kind === 'placeholder') return f.name;
  return f.key ?? f.alias ?? f.id ?? '(unnamed control)';
}

export interface FieldDescription {
  id: string | null;
  tag: string | null;
  alias: string | null;
  group: string | null;
  type: string;
  location: PartLocation;
  kind: 'control' | 'placeholder';
  control?: ControlKind;
  level?: ControlLevel;
  part: string;
}

export function describeField(f: TemplateField): FieldDescription {
  if (f.kind === 'placeholder') {
    return { id: f.name, tag: null, alias: null, group: null, type: 'text', location: f.part.location, kind: 'placeholder', part: f.part.name };
  }
  return {
    id: f.id ?? null,
    tag: f.tag ?? null,
    alias: f.alias ?? null,
    group: f.group ?? null,
    type: fieldType(f),
    location: f.part.location,
    kind: 'control',
    control: f.control,
    level: f.level,
    part: f.part.name,
  };
}
