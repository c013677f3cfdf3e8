/** The usage report as CSV (RFC 4180: CRLF lines, fields quoted when they hold a comma, quote or newline). */
import type { UsageReport } from './store.js';

function csvField(v: string | number): string {
  const s = String(v);
  // A leading =, +, - or @ would be a formula in a spreadsheet; prefix a quote (OWASP CSV injection advice).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function usageCsv(reports: UsageReport[]): string {
  const lines = ['licenseKey,month,documents,opens,hostnames'];
  for (const r of reports) {
    lines.push([r.licenseKey, r.month, r.documents, r.opens, r.hostnames.join(' ')].map(csvField).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
