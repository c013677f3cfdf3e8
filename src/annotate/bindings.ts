/**
 * Data-bound content controls (w:dataBinding): Word re-renders such a control from its customXml (or
 * core/extended properties) store when the document opens, so a filled value would be overwritten by the old
 * bound one. The bound node is updated when the XPath is the simple child-step form Word writes
 * (`/ns0:root[1]/ns0:child[1]`) and the store is found; otherwise the binding is dropped.
 */
import type { TemplateDocument } from './document.js';
import { appendChild, attr, child, childElements, el, remove, setText, type XElement } from '../docx/xml.js';

/** Stores Word binds to that live outside customXml. */
const BUILT_IN_STORES: Record<string, string> = {
  '{6C3C8BC8-F283-45AE-878A-BAB7291924A1}': 'docProps/core.xml',
  '{6668398D-A668-4E3E-A5EB-62B293D839F1}': 'docProps/app.xml',
};

const storeCache = new WeakMap<TemplateDocument, Map<string, string>>();

function stores(doc: TemplateDocument): Map<string, string> {
  let map = storeCache.get(doc);
  if (map) return map;
  map = new Map(Object.entries(BUILT_IN_STORES));
  for (const name of doc.pkg.names()) {
    const m = /^customXml\/itemProps(\d*)\.xml$/i.exec(name);
    if (!m) continue;
    const id = /itemID="(\{[0-9A-Fa-f-]+\})"/.exec(doc.pkg.text(name) ?? '')?.[1];
    const item = `customXml/item${m[1]}.xml`;
    if (id && doc.pkg.has(item)) map.set(id.toUpperCase(), item);
  }
  storeCache.set(doc, map);
  return map;
}

const localName = (qname: string) => qname.slice(qname.indexOf(':') + 1);

/** `xmlns:ns0='uri' xmlns:ns1='uri'` → { ns0: uri, ... } */
function prefixMappings(s: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const m of s.matchAll(/xmlns:([\w.-]+)\s*=\s*['"]([^'"]*)['"]/g)) map.set(m[1]!, m[2]!);
  return map;
}

/**
 * Element children by local name, indexed once per store element: thousands of controls bound into a store
 * of thousands of items would otherwise scan the same children once per control. Stores change only by
 * resolve() appending a missing last step (kept in the index) and by leaf text being set.
 */
const childIndex = new WeakMap<XElement, Map<string, XElement[]>>();

function childrenNamed(e: XElement, name: string): XElement[] {
  let index = childIndex.get(e);
  if (!index) {
    index = new Map();
    for (const c of childElements(e)) {
      const k = localName(c.name);
      const list = index.get(k);
      if (list) list.push(c);
      else index.set(k, [c]);
    }
    childIndex.set(e, index);
  }
  let list = index.get(name);
  if (!list) index.set(name, (list = []));
  return list;
}

/**
 * Follows the XPath's child steps. A missing last step under an existing parent is created (Word binds
 * document properties such as dc:creator that a template may not have yet).
 */
function resolve(root: XElement, xpath: string, mappings: Map<string, string>): XElement | undefined {
  const steps = xpath.split('/');
  if (steps[0] !== '' || steps.length < 2) return undefined;
  let current: XElement | undefined;
  for (let i = 1; i < steps.length; i++) {
    const m = /^(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)(?:\[(\d+)\])?$/.exec(steps[i]!);
    if (!m) return undefined;
    const name = m[2]!;
    const index = Number(m[3] ?? 1);
    if (i === 1) {
      if (localName(root.name) !== name || index !== 1) return undefined;
      current = root;
      continue;
    }
    const matches = childrenNamed(current!, name);
    const next = matches[index - 1];
    if (!next) {
      if (i !== steps.length - 1 || index !== matches.length + 1) return undefined;
      const uri = m[1] ? mappings.get(m[1]) : undefined;
      const declared = uri ? root.attrs.find(([k, v]) => k.startsWith('xmlns:') && v === uri)?.[0].slice(6) : undefined;
      const created = declared ? el(`${declared}:${name}`) : uri ? el(name, [['xmlns', uri]]) : el(name);
      appendChild(current!, created);
      matches.push(created);
      return created;
    }
    current = next;
  }
  return current;
}

/** Writes `value` to the control's bound node, or drops the binding when it cannot (or value is undefined). */
export function updateBinding(doc: TemplateDocument, sdtPr: XElement, value: string | undefined): void {
  const binding = child(sdtPr, 'w:dataBinding');
  if (!binding) return;
  const storeId = (attr(binding, 'w:storeItemID') ?? '').toUpperCase();
  const xpath = attr(binding, 'w:xpath') ?? '';
  const part = stores(doc).get(storeId);
  if (value !== undefined && part) {
    try {
      const store = doc.parse(part);
      const target = resolve(store.root, xpath, prefixMappings(attr(binding, 'w:prefixMappings') ?? ''));
      if (target && childElements(target).length === 0) {
        setText(target, value);
        doc.markDirty(part);
        return;
      }
    } catch {
      // An unreadable store cannot be updated: fall through and drop the binding.
    }
  }
  remove(binding);
}
