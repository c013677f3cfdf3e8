/**
 * Remote mode's way to the API: @folio/client's FolioClient, loaded when a command first needs it. The
 * CLI states here the part of its public surface it calls, and imports the package by a specifier the
 * compiler does not follow: `npm run build` compiles the server (tsc) before it builds the client package,
 * so on a fresh clone the client's type declarations do not exist yet when src/ is compiled.
 * test/cli/client-surface.ts holds FolioClient to this interface under `tsc -p tsconfig.check.json`.
 */

export interface CliPathUpload {
  path: string;
}

export interface CliKeyInfo {
  keyId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  current: boolean;
}

export interface CliClient {
  convert(
    file: CliPathUpload,
    options: {
      from?: 'docx' | 'md' | 'html' | 'pdf';
      to?: 'pdf' | 'docx' | 'md' | 'html' | 'png' | 'jpeg';
      /** Page previews (to png|jpeg). */
      width?: string;
      pages?: string;
      images?: 'inline' | 'drop';
      trackedChanges?: 'markup' | 'accept' | 'reject';
      pdfa?: '1b' | '2b' | '3b';
      tagged?: boolean;
      comments?: 'none' | 'margin' | 'annotations';
      pageSize?: 'A4' | 'Letter';
      filename?: string;
    },
  ): Promise<{ bytes: Uint8Array; warnings?: string[] }>;
  annotate(
    document: Uint8Array,
    fields: never[],
    options: { to?: 'docx' | 'pdf'; strict?: boolean },
  ): Promise<{
    document: { base64: string };
    report: { filled: Array<{ id: string; type: string; occurrences: number }>; unmatched: string[]; unfilled: string[] };
  }>;
  annotateFields(document: Uint8Array): Promise<unknown[]>;
  sign(request: {
    document: Uint8Array;
    signer: { name: string; email: string; ip?: string; userAgent?: string };
    auditTrail: Array<{ type: string; timestamp: string; data?: Record<string, unknown> }>;
    eventId?: string;
    certificate?: { enabled: boolean };
    level?: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
  }): Promise<{ document: { base64: string } }>;
  verify(document: CliPathUpload): Promise<unknown>;
  merge(
    inputs: Array<{ document: CliPathUpload; fileName?: string; title?: string; labelPrefix?: string }>,
    options: { outline?: boolean; pageLabels?: boolean },
  ): Promise<{ bytes: Uint8Array; pageCount: number; warnings: string[] }>;
  register(email: string): Promise<{ message: string; email: string; expiresInSeconds: number }>;
  verifyEmail(email: string, code: string): Promise<{ apiKey: string; keyId: string; email: string }>;
  listKeys(): Promise<CliKeyInfo[]>;
  revokeKey(keyId: string): Promise<void>;
}

type ClientConstructor = new (options: { baseUrl: string; apiKey?: string; headers?: Record<string, string> }) => CliClient;

/** A string the compiler cannot resolve statically (see the header). */
const CLIENT_PACKAGE: string = '@folio/client';

export async function createClient(baseUrl: string, apiKey: string | undefined): Promise<CliClient> {
  const { FolioClient } = (await import(CLIENT_PACKAGE)) as { FolioClient: ClientConstructor };
  return new FolioClient({ baseUrl, apiKey });
}
