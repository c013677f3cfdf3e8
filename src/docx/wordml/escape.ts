/** XML escaping for WordprocessingML text and attribute values, tuned for the converters' hot paths. */

// Characters XML 1.0 forbids (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>]/;
const ATTR_SPECIAL = /[&<>"]/;

// A cheap first test: only text with a control character, a surrogate or U+FFFE/F needs the full pattern.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const MAYBE_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/**
 * Whether text is XML as it is: no &, <, >, no control character other than tab/LF/CR, no surrogate, no
 * U+FFFE/U+FFFF. One scan over the characters, which returns early on the first that needs work: nearly all
 * text a converter writes is plain, and two regex tests per run cost twice this (1 MB Markdown benchmark).
 */
function plainText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 && c !== 0x0a && c !== 0x0d : c === 0x26 || c === 0x3c || c === 0x3e || (c >= 0xd800 && (c <= 0xdfff || c >= 0xfffe)))
      return false;
  }
  return true;
}

/** Escapes text content for XML and drops characters XML cannot carry. */
export function xmlText(s: string): string {
  if (plainText(s)) return s;
  if (MAYBE_INVALID.test(s)) s = s.replace(XML_INVALID, '');
  if (!TEXT_SPECIAL.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes an attribute value (double-quoted); tabs and newlines become spaces, as Word reads them. */
export function xmlAttr(s: string): string {
  if (MAYBE_INVALID.test(s)) s = s.replace(XML_INVALID, '');
  s = s.replace(/[\t\n\r]/g, ' ');
  if (!ATTR_SPECIAL.test(s)) return s;
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
