/** XML escaping for WordprocessingML text and attribute values, tuned for the converters' hot paths. */

// Characters XML 1.0 forbids (C0 controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>]/;
const ATTR_SPECIAL = /[&<>"]/;

// A cheap first test: only text with a control character, a surrogate or U+FFFE/F needs the full pattern.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const MAYBE_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** Escapes text content for XML and drops characters XML cannot carry. */
export function xmlText(s: string): string {
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
