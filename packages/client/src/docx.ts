/**
 * Reading and writing the identity metadata of a DOCX package: `w15:docId` (word/settings.xml), the
 * `DocumentGuid` custom property (docProps/custom.xml) and `dcterms:created` (docProps/core.xml). Reading
 * inflates only those parts, each bounded; writing rebuilds the package with the missing values added and
 * creates docProps/custom.xml (or core.xml), its relationship and its content type when absent.
 */
import { strFromU8, strToU8, unzipSync, zipSync, type Unzipped, type Zippable } from 'fflate';
import { FolioClientError } from './errors.js';
import { NS, appendToRoot, attr, decodeEntities, elementText, encodeText, ensurePrefix, prefixesFor, qname, rootStartTag, startTags } from './xml.js';

export const SETTINGS_PART = 'word/settings.xml';
export const CORE_PART = 'docProps/core.xml';
export const CUSTOM_PART = 'docProps/custom.xml';
const CONTENT_TYPES_PART = '[Content_Types].xml';
const PACKAGE_RELS_PART = '_rels/.rels';
/** The property-set id Word uses for user-defined custom properties. */
const CUSTOM_FMTID = '{D5CDD505-2E9C-101B-9397-08002B2CF9AE}';
const CUSTOM_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.custom-properties+xml';
const CORE_CONTENT_TYPE = 'application/vnd.openxmlformats-package.core-properties+xml';
const CUSTOM_REL_TYPE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties';
const CORE_REL_TYPE = 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties';
/** Metadata parts are a few KB; anything beyond this is not a real one and is not inflated. */
const MAX_METADATA_PART_BYTES = 4 * 1024 * 1024;
/** Bound on the whole inflated package when rewriting it (export). */
const MAX_PACKAGE_BYTES = 512 * 1024 * 1024;

export interface DocxMetadata {
  /** `w15:docId` without braces, else `DocumentGuid`; null when neither is present. */
  guid: string | null;
  /** Where the GUID came from. */
  guidSource: 'w15:docId' | 'DocumentGuid' | null;
  /** `dcterms:created` as written (trimmed); null when absent or empty. */
  createdAt: string | null;
}

const isZip = (b: Uint8Array) => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5) && (b[3] === 4 || b[3] === 6);

/** Names of entries stored without compression (images, usually): written back stored, not re-deflated. */
type StoredNames = Set<string>;

function unzipParts(bytes: Uint8Array, wanted: (name: string) => boolean, limit: number, stored?: StoredNames): Unzipped {
  if (!isZip(bytes)) throw new FolioClientError('INVALID_FILE_FORMAT', 'The input is not a DOCX file (not a ZIP package)');
  let total = 0;
  let isWordprocessing = false;
  let parts: Unzipped;
  try {
    parts = unzipSync(bytes, {
      filter: (f) => {
        if (f.name === 'word/document.xml') isWordprocessing = true;
        if (!wanted(f.name)) return false;
        if (f.compression === 0) stored?.add(f.name);
        total += f.originalSize;
        if (f.originalSize > limit || total > MAX_PACKAGE_BYTES) {
          throw new FolioClientError('INVALID_FILE_FORMAT', `The DOCX part ${f.name} is implausibly large`);
        }
        return true;
      },
    });
  } catch (e) {
    if (e instanceof FolioClientError) throw e;
    throw new FolioClientError('INVALID_FILE_FORMAT', `The DOCX package cannot be read: ${(e as Error).message}`);
  }
  if (!isWordprocessing) throw new FolioClientError('INVALID_FILE_FORMAT', 'The input is a ZIP file but not a DOCX (no word/document.xml)');
  return parts;
}

function text(parts: Unzipped, name: string): string | undefined {
  const p = parts[name];
  if (!p) return undefined;
  const s = strFromU8(p);
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

function docIdOf(settings: string | undefined): string | null {
  if (!settings) return null;
  for (const prefix of prefixesFor(settings, NS.w15).filter(Boolean)) {
    for (const tag of startTags(settings, `${prefix}:docId`)) {
      const v = attr(tag, `${prefix}:val`)?.trim().replace(/^\{/, '').replace(/\}$/, '').trim();
      if (v) return v;
    }
  }
  return null;
}

function customGuidOf(custom: string | undefined): string | null {
  if (!custom) return null;
  const re = /<([\w.-]+:)?property(?=[\s>])([^>]*)>([\s\S]*?)<\/\1?property\s*>/g;
  for (let m = re.exec(custom); m; m = re.exec(custom)) {
    if (attr(m[2]!, 'name') !== 'DocumentGuid') continue;
    const value = /<(?:[\w.-]+:)?(?:lpwstr|lpstr|bstr)(?=[\s>])[^>]*>([^<]*)</.exec(m[3]!);
    const v = value ? decodeEntities(value[1]!).trim() : '';
    if (v) return v;
  }
  return null;
}

function createdOf(core: string | undefined): string | null {
  if (!core) return null;
  for (const prefix of prefixesFor(core, NS.dcterms).filter(Boolean)) {
    const v = elementText(core, `${prefix}:created`)?.trim();
    if (v) return v;
  }
  return null;
}

export function readDocxMetadata(bytes: Uint8Array): DocxMetadata {
  const parts = unzipParts(bytes, (n) => n === SETTINGS_PART || n === CORE_PART || n === CUSTOM_PART, MAX_METADATA_PART_BYTES);
  const docId = docIdOf(text(parts, SETTINGS_PART));
  const customGuid = docId ? null : customGuidOf(text(parts, CUSTOM_PART));
  return {
    guid: docId ?? customGuid,
    guidSource: docId ? 'w15:docId' : customGuid ? 'DocumentGuid' : null,
    createdAt: createdOf(text(parts, CORE_PART)),
  };
}

function addContentTypeOverride(types: string, partName: string, contentType: string): string {
  const exists = startTags(types, 'Override').some((t) => attr(t, 'PartName')?.toLowerCase() === partName.toLowerCase());
  if (exists) return types;
  return appendToRoot(types, `<Override PartName="${partName}" ContentType="${contentType}"/>`);
}

function addPackageRelationship(rels: string, type: string, target: string): string {
  const tags = startTags(rels, 'Relationship');
  if (tags.some((t) => attr(t, 'Type') === type)) return rels;
  const ids = new Set(tags.map((t) => attr(t, 'Id')));
  let n = tags.length + 1;
  while (ids.has(`rId${n}`)) n++;
  return appendToRoot(rels, `<Relationship Id="rId${n}" Type="${type}" Target="${target}"/>`);
}

function writeCreated(core: string | undefined, createdAt: string): string {
  if (!core) {
    return (
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n' +
      `<cp:coreProperties xmlns:cp="${NS.coreProps}" xmlns:dc="${NS.dc}" xmlns:dcterms="${NS.dcterms}" xmlns:xsi="${NS.xsi}">` +
      `<dcterms:created xsi:type="dcterms:W3CDTF">${createdAt}</dcterms:created></cp:coreProperties>`
    );
  }
  let xml = core;
  // An empty <dcterms:created/> or <dcterms:created></dcterms:created> is replaced, not duplicated.
  for (const prefix of prefixesFor(xml, NS.dcterms).filter(Boolean)) {
    xml = xml.replace(new RegExp(`<${prefix}:created(?=[\\s/>])[^>]*?(?:/>|>\\s*</${prefix}:created\\s*>)`, 'g'), '');
  }
  const d = ensurePrefix(xml, NS.dcterms, 'dcterms');
  const x = ensurePrefix(d.xml, NS.xsi, 'xsi');
  return appendToRoot(x.xml, `<${d.prefix}:created ${x.prefix}:type="${d.prefix}:W3CDTF">${createdAt}</${d.prefix}:created>`);
}

function writeGuid(custom: string | undefined, guid: string): string {
  const property = (p: string, vt: string, pid: number) =>
    `<${qname(p, 'property')} fmtid="${CUSTOM_FMTID}" pid="${pid}" name="DocumentGuid"><${vt}:lpwstr>${encodeText(guid)}</${vt}:lpwstr></${qname(p, 'property')}>`;
  if (!custom) {
    return (
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n' +
      `<Properties xmlns="${NS.customProps}" xmlns:vt="${NS.vt}">${property('', 'vt', 2)}</Properties>`
    );
  }
  const root = rootStartTag(custom);
  const rootPrefix = root && root.name.includes(':') ? root.name.split(':')[0]! : '';
  const pids = [...custom.matchAll(/\spid\s*=\s*["'](\d+)["']/g)].map((m) => Number(m[1]));
  const pid = Math.max(1, ...pids) + 1; // pid 0 and 1 are reserved; user properties start at 2
  const v = ensurePrefix(custom, NS.vt, 'vt');
  return appendToRoot(v.xml, property(rootPrefix, v.prefix, pid));
}

/**
 * The package with `guid` (as the DocumentGuid custom property) and/or `createdAt` (as dcterms:created)
 * written. Every other part is carried over byte for byte (re-deflated), in its original order.
 */
export function writeDocxMetadata(bytes: Uint8Array, add: { guid?: string; createdAt?: string }): Uint8Array {
  if (!add.guid && !add.createdAt) return bytes.slice();
  const stored: StoredNames = new Set();
  const parts = unzipParts(bytes, () => true, MAX_PACKAGE_BYTES, stored);
  const out: Record<string, Uint8Array> = { ...parts };
  let types =
    text(parts, CONTENT_TYPES_PART) ?? `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<Types xmlns="${NS.contentTypes}"></Types>`;
  let rels =
    text(parts, PACKAGE_RELS_PART) ??
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<Relationships xmlns="${NS.relationships}"></Relationships>`;
  if (add.createdAt) {
    out[CORE_PART] = strToU8(writeCreated(text(parts, CORE_PART), add.createdAt));
    types = addContentTypeOverride(types, `/${CORE_PART}`, CORE_CONTENT_TYPE);
    rels = addPackageRelationship(rels, CORE_REL_TYPE, CORE_PART);
  }
  if (add.guid) {
    out[CUSTOM_PART] = strToU8(writeGuid(text(parts, CUSTOM_PART), add.guid));
    types = addContentTypeOverride(types, `/${CUSTOM_PART}`, CUSTOM_CONTENT_TYPE);
    rels = addPackageRelationship(rels, CUSTOM_REL_TYPE, CUSTOM_PART);
  }
  out[CONTENT_TYPES_PART] = strToU8(types);
  out[PACKAGE_RELS_PART] = strToU8(rels);
  // [Content_Types].xml first, as Office writes it; then the original order, then new parts.
  const ordered: Zippable = {};
  for (const name of [CONTENT_TYPES_PART, ...Object.keys(parts), ...Object.keys(out)]) {
    if (!(name in ordered) && out[name]) ordered[name] = [out[name]!, { level: stored.has(name) ? 0 : 6 }];
  }
  return zipSync(ordered);
}
