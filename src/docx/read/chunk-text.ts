/**
 * The text formats an embedded chunk (w:altChunk) arrives in, made readable without a browser or an office
 * engine: bytes → a string in the chunk's character set (a BOM, else the charset the chunk declares, else
 * UTF-8); a MIME web archive (.mht, message/rfc822 or multipart/related, what Outlook and SharePoint embed) →
 * its HTML part; RTF → its plain text. Each is one linear pass over bounded input (the chunk's part, within
 * the package's bounds), with no recursion.
 */

/** Labels TextDecoder knows that documents name in a charset declaration; anything else reads as UTF-8. */
function decoderFor(label: string | undefined): { decode(b: Uint8Array): string } {
  try {
    return new TextDecoder(label?.trim().toLowerCase() || 'utf-8', { fatal: false });
  } catch {
    return new TextDecoder('utf-8', { fatal: false });
  }
}

/** Bytes of a text chunk as a string: a BOM wins, then a charset named in its head (HTML meta or XML declaration). */
export function decodeChunk(bytes: Uint8Array, declaredCharset?: string): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return decoderFor('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decoderFor('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decoderFor('utf-16be').decode(bytes.subarray(2));
  const head = decoderFor('latin1').decode(bytes.subarray(0, 2048));
  const named =
    declaredCharset ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]{1,40})/i.exec(head)?.[1] ??
    /<\?xml[^>]+encoding\s*=\s*["']([\w.:-]{1,40})/i.exec(head)?.[1];
  return decoderFor(named).decode(bytes);
}

/** Decodes quoted-printable (soft line breaks, =XX bytes) into bytes. */
function quotedPrintable(s: string): Uint8Array {
  const body = s.replace(/=\r?\n/g, '');
  const out = new Uint8Array(body.length);
  let n = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x3d && /^[0-9A-Fa-f]{2}$/.test(body.slice(i + 1, i + 3))) {
      out[n++] = parseInt(body.slice(i + 1, i + 3), 16);
      i += 2;
    } else out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

/**
 * The HTML of a MIME web archive: the first part whose Content-Type is text/html, decoded from its transfer
 * encoding (quoted-printable, base64, 7bit/8bit) and character set; undefined when there is none.
 */
export function mhtHtml(bytes: Uint8Array): string | undefined {
  const text = decoderFor('latin1').decode(bytes);
  const boundary = /boundary\s*=\s*"?([^";\r\n]{1,200})"?/i.exec(text.slice(0, 8192))?.[1];
  const parts = boundary ? text.split(`--${boundary}`) : [text];
  for (const part of parts) {
    const split = /\r?\n\r?\n/.exec(part);
    if (!split) continue;
    const headers = part.slice(0, split.index);
    if (!/content-type:\s*text\/html/i.test(headers)) continue;
    let body = part.slice(split.index + split[0].length);
    const charset = /charset\s*=\s*"?([\w.:-]{1,40})/i.exec(headers)?.[1];
    const encoding = /content-transfer-encoding:\s*([\w-]+)/i.exec(headers)?.[1]?.toLowerCase();
    let raw: Uint8Array;
    if (encoding === 'base64') raw = new Uint8Array(Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64'));
    else if (encoding === 'quoted-printable') raw = quotedPrintable(body);
    else {
      body = body.replace(/\r?\n$/, '');
      raw = Uint8Array.from(body, (c: string) => c.charCodeAt(0) & 0xff);
    }
    return decodeChunk(raw, charset);
  }
  return undefined;
}

/** RTF destinations whose content is not the document's text (tables of fonts, colours, styles, pictures...). */
const SKIPPED = new Set([
  'fonttbl',
  'colortbl',
  'stylesheet',
  'info',
  'pict',
  'object',
  'header',
  'headerl',
  'headerr',
  'headerf',
  'footer',
  'footerl',
  'footerr',
  'footerf',
  'footnote',
  'themedata',
  'colorschememapping',
  'latentstyles',
  'datastore',
  'xmlnstbl',
  'listtable',
  'listoverridetable',
  'rsidtbl',
  'generator',
  'mmathPr',
  'filetbl',
  'revtbl',
  'pgdsctbl',
  'fldinst',
  'bkmkstart',
  'bkmkend',
  'xe',
  'tc',
]);

/** Control words that are characters or breaks. */
const CHAR_WORDS: Record<string, string> = {
  par: '\n',
  line: '\n',
  sect: '\n',
  page: '\n',
  row: '\n',
  cell: '\t',
  tab: '\t',
  emdash: '—',
  endash: '–',
  lquote: '‘',
  rquote: '’',
  ldblquote: '“',
  rdblquote: '”',
  bullet: '•',
  emspace: ' ',
  enspace: ' ',
  qmspace: ' ',
};

/**
 * The plain text of an RTF document: groups of skipped destinations (and `{\*\…}` ones) left out, control
 * words that are characters or breaks kept, `\'hh` bytes read in the document's code page (Windows-1252
 * unless \ansicpg names another TextDecoder knows), `\uN` characters with their \ucN fallbacks skipped.
 * Linear; nesting is a counter, not recursion.
 */
export function rtfText(rtf: string): string {
  let out = '';
  let depth = 0;
  /** The depth of the skipped group we are in (0: none). */
  let skipFrom = 0;
  /** Per open group: the \uc value (fallback characters after \uN). */
  const uc: number[] = [1];
  let pendingSkip = 0;
  let cp = 'windows-1252';
  let bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length) {
      if (!skipFrom) out += decoderFor(cp).decode(new Uint8Array(bytes));
      bytes = [];
    }
  };
  const emit = (s: string) => {
    flushBytes();
    if (!skipFrom) out += s;
  };
  let groupStart = false;
  for (let i = 0; i < rtf.length;) {
    const c = rtf[i]!;
    if (c === '{') {
      flushBytes();
      depth++;
      uc.push(uc[uc.length - 1] ?? 1);
      groupStart = true;
      i++;
      continue;
    }
    if (c === '}') {
      flushBytes();
      if (skipFrom === depth) skipFrom = 0;
      depth = Math.max(0, depth - 1);
      if (uc.length > 1) uc.pop();
      groupStart = false;
      i++;
      continue;
    }
    if (c === '\\') {
      const next = rtf[i + 1] ?? '';
      if (next === '*') {
        if (groupStart && !skipFrom) skipFrom = depth;
        i += 2;
        continue;
      }
      if (next === "'") {
        const hex = rtf.slice(i + 2, i + 4);
        if (/^[0-9a-fA-F]{2}$/.test(hex)) {
          if (pendingSkip > 0) pendingSkip--;
          else bytes.push(parseInt(hex, 16));
        }
        i += 4;
        groupStart = false;
        continue;
      }
      if (/[a-zA-Z]/.test(next)) {
        const m = /^([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(rtf.slice(i + 1, i + 48))!;
        const word = m[1]!;
        const arg = m[2] === undefined ? undefined : Number(m[2]);
        i += 1 + m[0].length;
        if (groupStart && SKIPPED.has(word) && !skipFrom) skipFrom = depth;
        groupStart = false;
        if (word === 'ansicpg' && arg !== undefined) cp = `windows-${arg}`;
        else if (word === 'uc' && arg !== undefined) uc[uc.length - 1] = Math.max(0, Math.min(arg, 8));
        else if (word === 'u' && arg !== undefined) {
          emit(String.fromCharCode(arg < 0 ? arg + 65536 : arg));
          pendingSkip = uc[uc.length - 1] ?? 1;
        } else if (word === 'bin' && arg !== undefined) i += Math.max(0, arg);
        else if (CHAR_WORDS[word] !== undefined) emit(CHAR_WORDS[word]!);
        continue;
      }
      // Control symbols: escaped characters, non-breaking space and hyphen, optional hyphen.
      i += 2;
      groupStart = false;
      if (next === '{' || next === '}' || next === '\\') emit(next);
      else if (next === '~') emit('\u00a0');
      else if (next === '_') emit('-');
      else if (next === '\n' || next === '\r') emit('\n');
      continue;
    }
    if (c === '\r' || c === '\n') {
      i++;
      continue;
    }
    groupStart = false;
    if (pendingSkip > 0) pendingSkip--;
    else emit(c);
    i++;
  }
  flushBytes();
  return out;
}
