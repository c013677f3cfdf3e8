/**
 * What a document to sign is, asked once where it comes in (the route, the CLI) through the one sniffing
 * module; the answer travels with the request, so the engine never looks at the first bytes again. Small on
 * purpose: the CLI imports it without loading the signer.
 */
import { FolioError } from '../errors.js';
import { sniff } from '../formats/sniff.js';

/** A PDF, or a DOCX (any ZIP: the office engine tells a package that is no DOCX); else 400 INVALID_FILE_FORMAT. */
export function signInputKind(bytes: Uint8Array): 'pdf' | 'docx' {
  const kind = sniff(bytes);
  if (kind === 'pdf') return 'pdf';
  if (kind === 'zip') return 'docx';
  throw new FolioError('INVALID_FILE_FORMAT', 'The document is neither a PDF nor a DOCX', {
    details: [{ field: 'document', issue: 'not a PDF or DOCX file' }],
  });
}
