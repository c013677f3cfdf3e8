/**
 * Request values → values the filler can write. Everything that can be wrong with a value is found here,
 * before the template is touched: a wrong type, an undecodable image, a date that is not a date, a link to
 * a javascript: URL all give 422 VALIDATION_ERROR naming `fields[i].value` (or the option at fault).
 * Image URLs are fetched here, under the same rules as documents (docs/api.md § Common rules).
 */
import { FolioError } from '../errors.js';
import { decodeBase64Input } from '../fetch/document-source.js';
import type { SafeFetcher } from '../fetch/safe-fetch.js';
import { parseIsoDate } from './dates.js';
import { prepareImage, renderTypedSignature, type PreparedImage } from './images.js';
import { stripInvalidXmlChars } from '../docx/xml.js';
import type { AnnotateField, ResolvedValue } from './types.js';

/** Largest image accepted per field (the document limit). */
const MAX_IMAGE_BYTES = 25 * 1024 * 1024;
/**
 * Table cells. Every cell becomes about seven elements of the document tree and ~100 bytes of output, so a
 * 2,000 × 200 value (400,000 cells) alone needed over a gigabyte: one value may hold 100,000 cells (10,000
 * rows of 10 columns), a request 200,000, and their text 20 million characters together.
 */
export const MAX_TABLE_VALUE_CELLS = 100_000;
export const MAX_TABLE_CELLS = 200_000;
export const MAX_TABLE_CHARS = 20_000_000;
const MAX_TEXT_CHARS = 1_000_000;

function unusable(field: string, issue: string): FolioError {
  return new FolioError('VALIDATION_ERROR', `${field}: ${issue}`, { status: 422, details: [{ field, issue }] });
}

/** Image URLs fetched per request: each may take the full fetch timeout, so their number is bounded. */
export const MAX_IMAGE_URLS = 50;

export interface ResolveContext {
  fetcher?: SafeFetcher;
  /** URLs fetched so far by this request. */
  urlFetches?: number;
  /** Cells (and their characters) already used by earlier table values of the request. */
  tableCells: { used: number; chars?: number };
}

function scalarText(v: unknown, field: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  throw unusable(field, `expected a string, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
}

export async function resolveValue(f: AnnotateField, index: number, ctx: ResolveContext): Promise<ResolvedValue> {
  const field = `fields[${index}].value`;
  const v = f.value;
  switch (f.type) {
    case 'text': {
      const text = scalarText(v, field);
      if (text.length > MAX_TEXT_CHARS) throw unusable(field, `text longer than ${MAX_TEXT_CHARS} characters`);
      return { type: 'text', text: stripInvalidXmlChars(text) };
    }
    case 'image':
      if (typeof v !== 'string' || !v.trim()) throw unusable(field, 'expected an image as a data URI, base64 or an http(s) URL');
      return { type: 'image', image: await loadImage(v.trim(), field, ctx, f.options?.alt ?? '') };
    case 'signature': {
      if (typeof v !== 'string' || !v.trim()) throw unusable(field, 'expected an image (data URI, base64, URL) or a name');
      const s = v.trim();
      if (/^data:/i.test(s) || /^https?:\/\//i.test(s))
        return { type: 'image', image: await loadImage(s, field, ctx, f.options?.alt ?? 'Signature') };
      // Base64 that decodes to an image is an image; anything else that reads as a name is typed.
      if (s.length >= 32 && /^[A-Za-z0-9+/=\s_-]+$/.test(s) && !/\s/.test(s.trim())) {
        try {
          return {
            type: 'image',
            image: await prepareImage(decodeBase64Input(s, field, MAX_IMAGE_BYTES).bytes, field, f.options?.alt ?? 'Signature'),
          };
        } catch (e) {
          if (e instanceof FolioError && e.code === 'FILE_TOO_LARGE') throw e;
        }
      }
      if (s.length > 200 || /[<>{}]/.test(s)) throw unusable(field, 'not an image, and not a name to type as a signature');
      return { type: 'image', image: renderTypedSignature(s, field) };
    }
    case 'table': {
      if (!Array.isArray(v)) throw unusable(field, 'expected rows as an array of arrays of strings');
      const rows: string[][] = [];
      let cells = 0;
      for (let r = 0; r < v.length; r++) {
        const row = v[r];
        if (!Array.isArray(row)) throw unusable(`${field}[${r}]`, 'expected an array of strings');
        cells += row.length;
        if (cells > MAX_TABLE_VALUE_CELLS)
          throw unusable(field, `a table value may hold at most ${MAX_TABLE_VALUE_CELLS} cells; this one reaches that at row ${r}`);
        ctx.tableCells.used += row.length;
        if (ctx.tableCells.used > MAX_TABLE_CELLS) throw unusable(field, `tables may hold at most ${MAX_TABLE_CELLS} cells per request`);
        const texts = row.map((c, i) => (c === null || c === undefined ? '' : stripInvalidXmlChars(scalarText(c, `${field}[${r}][${i}]`))));
        for (const t of texts) ctx.tableCells.chars = (ctx.tableCells.chars ?? 0) + t.length;
        if ((ctx.tableCells.chars ?? 0) > MAX_TABLE_CHARS)
          throw unusable(field, `table cells may hold at most ${MAX_TABLE_CHARS} characters per request`);
        rows.push(texts);
      }
      return { type: 'table', rows };
    }
    case 'checkbox': {
      if (typeof v === 'boolean') return { type: 'checkbox', checked: v };
      if (v === 'true' || v === 'false') return { type: 'checkbox', checked: v === 'true' };
      throw unusable(field, 'expected true or false');
    }
    case 'date': {
      if (typeof v !== 'string') throw unusable(field, 'expected an ISO 8601 date (YYYY-MM-DD)');
      const date = parseIsoDate(v);
      if (!date) throw unusable(field, `"${v.slice(0, 40)}" is not an ISO 8601 date (YYYY-MM-DD)`);
      if (f.options?.format !== undefined && (typeof f.options.format !== 'string' || f.options.format.length > 100)) {
        throw unusable(`fields[${index}].options.format`, 'expected a Word date picture such as "dd/MM/yyyy"');
      }
      return { type: 'date', date };
    }
    case 'html': {
      const html = scalarText(v, field);
      if (html.length > 5 * 1024 * 1024) throw unusable(field, 'HTML longer than 5 MB');
      return { type: 'html', html };
    }
    case 'link': {
      let url: unknown;
      let text: unknown;
      if (typeof v === 'string') url = v;
      else if (v && typeof v === 'object' && !Array.isArray(v)) {
        const o = v as Record<string, unknown>;
        const extra = Object.keys(o).filter((k) => k !== 'url' && k !== 'text');
        if (extra.length) throw unusable(`${field}.${extra[0]}`, 'unknown property (a link is {url, text})');
        url = o.url;
        text = o.text;
      }
      if (typeof url !== 'string' || !url.trim()) throw unusable(field, 'expected {url, text}');
      if (text !== undefined && typeof text !== 'string') throw unusable(`${field}.text`, 'expected a string');
      return { type: 'link', url: normalizeUrl(url.trim(), `${field}.url`), text: stripInvalidXmlChars((text as string | undefined) || url.trim()) };
    }
  }
}

/** http(s), mailto and tel links; a bare host gets http:// (as SuperDoc does); other schemes are refused. */
function normalizeUrl(url: string, field: string): string {
  if (url.length > 2000) throw unusable(field, 'URL longer than 2000 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\s]/.test(url)) throw unusable(field, 'URL contains spaces or control characters');
  if (/^(https?:\/\/|mailto:|tel:)/i.test(url)) return url;
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^[^:]+:\d+(\/|$)/.test(url)) throw unusable(field, 'only http, https, mailto and tel links are allowed');
  return `http://${url}`;
}

async function loadImage(value: string, field: string, ctx: ResolveContext, description: string): Promise<PreparedImage> {
  let bytes: Uint8Array;
  if (/^https?:\/\//i.test(value)) {
    if (!ctx.fetcher) throw unusable(field, 'image URLs cannot be fetched here');
    ctx.urlFetches = (ctx.urlFetches ?? 0) + 1;
    if (ctx.urlFetches > MAX_IMAGE_URLS) throw unusable(field, `at most ${MAX_IMAGE_URLS} image URLs per request; send the others as data URIs`);
    bytes = (await ctx.fetcher.fetch(value, field)).bytes;
  } else {
    try {
      bytes = decodeBase64Input(value, field, MAX_IMAGE_BYTES).bytes;
    } catch (e) {
      if (e instanceof FolioError && e.code === 'VALIDATION_ERROR') throw unusable(field, 'the value is not a data URI, base64 or an http(s) URL');
      throw e;
    }
  }
  return await prepareImage(bytes, field, description);
}
