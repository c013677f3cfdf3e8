/**
 * Dates for date fields: parsing the ISO value and formatting it with Word's date picture (w:dateFormat,
 * e.g. "M/d/yyyy", "dddd, MMMM d, yyyy", "d 'de' MMMM") in the control's language (w:lid) through Intl.
 */

export interface CalendarDate {
  year: number;
  month: number; // 1–12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO 8601 date or date-time; undefined when it is not one or not a real calendar date. */
export function parseIsoDate(value: string): CalendarDate | undefined {
  const m = ISO_RE.exec(value.trim());
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  const hour = Number(m[4] ?? 0);
  const minute = Number(m[5] ?? 0);
  const second = Number(m[6] ?? 0);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  return { year, month, day, hour, minute, second };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** w:date/@w:fullDate as Word writes it. */
export function fullDateAttr(d: CalendarDate): string {
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}T${pad(d.hour)}:${pad(d.minute)}:${pad(d.second)}Z`;
}

function safeLocale(lid: string | undefined): string {
  if (!lid) return 'en-US';
  try {
    return Intl.getCanonicalLocales(lid)[0] ?? 'en-US';
  } catch {
    return 'en-US';
  }
}

const TOKEN_RE = /dddd|ddd|dd|d|MMMM|MMM|MM|M|yyyy|yy|HH|H|hh|h|mm|m|ss|s|AM\/PM|am\/pm|A\/P|a\/p|'[^']*'|"[^"]*"/g;

/** Formats with a Word date picture; unknown characters are copied as they are. */
export function formatWordDate(d: CalendarDate, picture: string, lid?: string): string {
  const locale = safeLocale(lid);
  const utc = new Date(Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second));
  const name = (opts: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(locale, { ...opts, timeZone: 'UTC' }).format(utc);
  const h12 = d.hour % 12 === 0 ? 12 : d.hour % 12;
  return picture.replace(TOKEN_RE, (tok) => {
    switch (tok) {
      case 'dddd':
        return name({ weekday: 'long' });
      case 'ddd':
        return name({ weekday: 'short' });
      case 'dd':
        return pad(d.day);
      case 'd':
        return String(d.day);
      case 'MMMM':
        return (
          new Intl.DateTimeFormat(locale, { month: 'long', day: 'numeric', timeZone: 'UTC' }).formatToParts(utc).find((p) => p.type === 'month')
            ?.value ?? name({ month: 'long' })
        );
      case 'MMM':
        return name({ month: 'short' }).replace(/\.$/, '');
      case 'MM':
        return pad(d.month);
      case 'M':
        return String(d.month);
      case 'yyyy':
        return pad(d.year, 4);
      case 'yy':
        return pad(d.year % 100);
      case 'HH':
        return pad(d.hour);
      case 'H':
        return String(d.hour);
      case 'hh':
        return pad(h12);
      case 'h':
        return String(h12);
      case 'mm':
        return pad(d.minute);
      case 'm':
        return String(d.minute);
      case 'ss':
        return pad(d.second);
      case 's':
        return String(d.second);
      case 'AM/PM':
        return d.hour < 12 ? 'AM' : 'PM';
      case 'am/pm':
        return d.hour < 12 ? 'am' : 'pm';
      case 'A/P':
        return d.hour < 12 ? 'A' : 'P';
      case 'a/p':
        return d.hour < 12 ? 'a' : 'p';
      default:
        return tok.slice(1, -1); // quoted literal
    }
  });
}

/** The picture used when neither the control nor the request names one. */
export const DEFAULT_DATE_PICTURE = 'MMMM d, yyyy';
