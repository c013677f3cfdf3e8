/**
 * `new Folio(options)` and `folio.open(input)` (docs/api.md § Client library). An open reads the identity metadata, computes
 * the documentId, starts the telemetry request without waiting for it, and returns a handle whose `export()`
 * writes whatever identity metadata was missing, so the next open of the exported file uses rule 1.
 */
import { readDocxMetadata, writeDocxMetadata } from './docx.js';
import { FolioClientError } from './errors.js';
import { documentIdOf, newGuid, nowW3cdtf, type IdentityRule } from './identity.js';
import { sendOpenEvent, type TelemetryTarget } from './telemetry.js';

export const COMMUNITY_LICENSE_KEY = 'community-and-eval-agplv3';
export const DEFAULT_TELEMETRY_ENDPOINT = 'http://localhost:8081/v1/collect';

export interface FolioTelemetryOptions {
  /** Default true. false: no request is ever made (identity metadata is still generated). */
  enabled?: boolean;
  /** Default `http://localhost:8081/v1/collect`. */
  endpoint?: string;
  /** Sent with each event as `metadata` (keep it small: the ingest refuses more than 4 KB). */
  metadata?: Record<string, unknown>;
  /** @deprecated Use the root `licenseKey`, which wins when both are set. */
  licenseKey?: string;
}

export interface FolioOptions {
  /** Default `community-and-eval-agplv3`. */
  licenseKey?: string;
  telemetry?: FolioTelemetryOptions;
}

export type DocumentInput = Uint8Array | ArrayBuffer | Blob;

let warnedDeprecatedKey = false;

async function toBytes(input: DocumentInput): Promise<Uint8Array> {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer || Object.prototype.toString.call(input) === '[object ArrayBuffer]') {
    return new Uint8Array(input as ArrayBuffer);
  }
  if (ArrayBuffer.isView(input)) {
    const v = input as ArrayBufferView;
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }
  if (input && typeof (input as Blob).arrayBuffer === 'function') return new Uint8Array(await (input as Blob).arrayBuffer());
  throw new FolioClientError('INVALID_INPUT', 'open() takes a Uint8Array, an ArrayBuffer, a Blob or a File');
}

/** An opened document: its identity, and the bytes to save with any missing identity metadata written. */
export class FolioDocument {
  /** @internal */
  constructor(
    private readonly bytes: Uint8Array,
    /** Lowercase hex SHA-256 (64 characters). */
    readonly documentId: string,
    /** The GUID read from the file (`w15:docId` without braces, else `DocumentGuid`), or null. */
    readonly guid: string | null,
    /** `dcterms:created` read from the file, or null. */
    readonly createdAt: string | null,
    /** 'metadata': GUID|created (stable across edits); 'content': hash of the bytes. */
    readonly rule: IdentityRule,
    /** What export() adds: a new GUID and/or creation time, fixed at open so every export agrees. */
    private readonly missing: { guid?: string; createdAt?: string },
  ) {}

  /** The GUID and creation time the exported file will carry (read, or generated at open). */
  get identity(): { guid: string; createdAt: string } {
    return { guid: this.guid ?? this.missing.guid!, createdAt: this.createdAt ?? this.missing.createdAt! };
  }

  /** The DOCX with any missing GUID (`DocumentGuid` custom property) and creation time written. */
  async export(): Promise<Uint8Array> {
    return writeDocxMetadata(this.bytes, this.missing);
  }
}

export class Folio {
  readonly licenseKey: string;
  readonly telemetryEnabled: boolean;
  readonly telemetryEndpoint: string;
  private readonly metadata?: Record<string, unknown>;

  constructor(options: FolioOptions = {}) {
    const t = options.telemetry ?? {};
    if (t.licenseKey !== undefined && !warnedDeprecatedKey) {
      warnedDeprecatedKey = true;
      console.warn('[@folio/client] telemetry.licenseKey is deprecated; set the root licenseKey option instead (it takes precedence).');
    }
    this.licenseKey = options.licenseKey ?? t.licenseKey ?? COMMUNITY_LICENSE_KEY;
    this.telemetryEnabled = t.enabled !== false;
    this.telemetryEndpoint = t.endpoint ?? DEFAULT_TELEMETRY_ENDPOINT;
    this.metadata = t.metadata;
  }

  /**
   * Opens a DOCX: reads its identity, sends one telemetry event (not awaited; failures are silent), and
   * returns the document. Rejects only when the input is not a readable DOCX.
   */
  async open(input: DocumentInput): Promise<FolioDocument> {
    const bytes = await toBytes(input);
    const meta = readDocxMetadata(bytes);
    const { documentId, rule } = await documentIdOf(meta.guid, meta.createdAt, bytes);
    const missing: { guid?: string; createdAt?: string } = {};
    if (!meta.guid) missing.guid = newGuid();
    if (!meta.createdAt) missing.createdAt = nowW3cdtf();
    if (this.telemetryEnabled) {
      const target: TelemetryTarget = { endpoint: this.telemetryEndpoint, licenseKey: this.licenseKey, metadata: this.metadata };
      sendOpenEvent(target, { timestamp: new Date().toISOString(), documentId, documentCreatedAt: meta.createdAt ?? missing.createdAt ?? null });
    }
    return new FolioDocument(bytes.slice(), documentId, meta.guid, meta.createdAt, rule, missing);
  }
}
