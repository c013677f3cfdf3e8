/**
 * Generated from the Folio API's OpenAPI document (src/http/openapi-types.ts) — do not edit by hand.
 * Regenerate: UPDATE_API_TYPES=1 npx vitest run test/foundation/openapi.test.ts
 */

export type ErrorEnvelope = {
  code: string;
  error: string;
  message: string;
  requestId: string;
  details?: Array<{
    field: string;
    issue: string;
  }>;
};

export interface AnnotateDocumentQuery {
  to?: 'docx' | 'pdf';
  strict?: 'true' | 'false';
  flatten?: 'true' | 'false';
}

export type AnnotateDocumentRequest = {
  document: { base64: string; url?: never } | { url: string; base64?: never };
  fields: Array<
    ({ id: string } | { group: string }) & {
      id?: string;
      group?: string;
      type: 'text' | 'image' | 'signature' | 'table' | 'checkbox' | 'date' | 'html' | 'link';
      value: unknown;
      options?: {
        keepTextNodeStyles?: boolean;
        dimensions?: {
          width?: number | string;
          height?: number | string;
        };
        copyRowStyle?: boolean;
        tableIndex?: number;
        flatten?: boolean;
        format?: string;
        locale?: string;
        alt?: string;
        arcElement?: {
          [key: string]: unknown;
        };
        topLabel?: {
          [key: string]: unknown;
        };
        bottomLabel?: {
          [key: string]: unknown;
        };
      };
    }
  >;
};

export type AnnotateDocumentResponse = {
  document: {
    base64: string;
    contentType: string;
  };
  report: {
    filled: Array<{
      id: string;
      type: string;
      occurrences: number;
    }>;
    unmatched: Array<string>;
    unfilled: Array<string>;
    warnings?: Array<string>;
  };
};

export interface ConvertDocumentQuery {
  from?: 'docx' | 'md' | 'html' | 'pdf';
  to?: 'pdf' | 'docx' | 'md' | 'html' | 'png' | 'jpeg';
  width?: string;
  pages?: string;
  trackedChanges?: 'markup' | 'accept' | 'reject';
  pdfa?: '1b' | '2b' | '3b';
  tagged?: 'true' | 'false';
  comments?: 'none' | 'margin' | 'annotations';
  images?: 'inline' | 'drop';
  pageSize?: 'A4' | 'Letter';
}

export type ConvertDocumentForm = {
  file: Blob;
  from?: 'docx' | 'md' | 'html' | 'pdf';
  to?: 'pdf' | 'docx' | 'md' | 'html' | 'png' | 'jpeg';
  width?: string;
  pages?: string;
  trackedChanges?: 'markup' | 'accept' | 'reject';
  pdfa?: '1b' | '2b' | '3b';
  tagged?: 'true' | 'false';
  comments?: 'none' | 'margin' | 'annotations';
  images?: 'inline' | 'drop';
  pageSize?: 'A4' | 'Letter';
};

export type GetHealthResponse = {
  status: 'healthy' | 'degraded' | 'unhealthy';
  timestamp: string;
  version: string;
  service: string;
  instance: {
    startTime: string;
    uptimeSeconds: number;
  };
  engines: {
    [key: string]: {
      status: 'healthy' | 'degraded' | 'unhealthy';
      workers?: number;
      busy?: number;
      queued?: number;
      [key: string]: unknown;
    };
  };
};

export type GetSigningKeyResponse = {
  algorithm: string;
  certificate: string;
  publicKey: string;
  fingerprint: string;
  validFrom: string;
  validTo: string;
  issuer: string;
  subject: string;
  previous?: Array<{
    algorithm: string;
    certificate: string;
    publicKey: string;
    fingerprint: string;
    validFrom: string;
    validTo: string;
    issuer: string;
    subject: string;
  }>;
};

export type ListKeysResponse = {
  keys: Array<{
    keyId: string;
    createdAt: string;
    lastUsedAt: string | null;
    revokedAt: string | null;
    current: boolean;
  }>;
};

export type ListTemplateFieldsRequest = {
  document: { base64: string; url?: never } | { url: string; base64?: never };
};

export type ListTemplateFieldsResponse = {
  fields: Array<{
    id: string | null;
    tag: string | null;
    alias: string | null;
    group: string | null;
    type: string;
    location: 'body' | 'header' | 'footer' | 'footnote' | 'endnote';
    kind?: 'control' | 'placeholder';
    control?: string;
    level?: string;
    part?: string;
    occurrences?: number;
  }>;
};

export type MergeDocumentsRequest = {
  documents: Array<
    ({ base64: string } | { url: string }) & {
      base64?: string;
      url?: string;
      fileName?: string;
      title?: string;
      labelPrefix?: string;
    }
  >;
  options?: {
    outline?: boolean;
    pageLabels?: boolean;
    pdfa?: '1b' | '2b' | '3b';
  };
};

export type MergeDocumentsForm = {
  files: Array<Blob>;
  outline?: 'true' | 'false';
  pageLabels?: 'true' | 'false';
  pdfa?: '1b' | '2b' | '3b';
};

export interface RegisterQuery {
  email: string;
}

export type RegisterResponse = {
  message: string;
  email: string;
  expiresInSeconds: number;
};

export type SignDocumentRequest = {
  document: { base64: string; url?: never } | { url: string; base64?: never };
  signer: {
    name: string;
    email: string;
    ip?: string;
    userAgent?: string;
  };
  auditTrail: Array<{
    type: string;
    timestamp: string;
    data?: {
      [key: string]: unknown;
    };
  }>;
  eventId?: string;
  metadata?: {
    ip?: string;
    userAgent?: string;
    [key: string]: unknown;
  };
  certificate?: {
    enabled?: boolean;
  };
  level?: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';
};

export type SignDocumentResponse = {
  document: {
    base64: string;
    contentType: 'application/pdf';
  };
};

export type VerifyDocumentRequest = {
  document: { base64: string; url?: never } | { url: string; base64?: never };
};

export type VerifyDocumentForm = {
  file: Blob;
};

export type VerifyDocumentResponse = {
  valid: boolean;
  indication: 'TOTAL_PASSED' | 'INDETERMINATE' | 'TOTAL_FAILED' | 'NO_SIGNATURE_FOUND';
  reason: string;
  signatureCount: number;
  documentTimestampCount?: number;
  signer?: {
    name?: string | null;
    email?: string | null;
    signedAt?: string | null;
  };
  signatures: Array<{
    type?: 'signature' | 'timestamp';
    level?: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA' | null;
    revocation?: {
      status: 'GOOD' | 'REVOKED' | 'UNKNOWN' | 'NOT_CHECKED';
      checkedAt?: string;
      revokedAt?: string;
      sources: Array<{
        type: 'OCSP' | 'CRL';
        origin: 'DSS' | 'VRI' | 'CMS' | 'ONLINE';
        issuer: string | null;
        producedAt?: string;
        thisUpdate?: string;
        nextUpdate?: string | null;
        valid: boolean;
        status?: 'GOOD' | 'REVOKED' | 'UNKNOWN';
        revokedAt?: string;
        problem?: string;
        revision?: number;
      }>;
    };
    fieldName?: string | null;
    subFilter?: string | null;
    digestAlgorithm?: string | null;
    signatureAlgorithm?: string | null;
    signedAt?: string | null;
    timestamp?: {
      time?: string;
      valid?: boolean;
      trusted?: boolean;
      tsaSubject?: string | null;
    };
    signer?: {
      name?: string | null;
      email?: string | null;
      subject?: string;
      issuer?: string;
      serialNumber?: string;
      notBefore?: string;
      notAfter?: string;
      fingerprint?: string;
    } | null;
    byteRange?: Array<number>;
    coverage?: 'ENTIRE_FILE' | 'ENTIRE_REVISION' | 'PARTIAL' | 'UNCLEAR';
    integrity?: {
      digestMatches?: boolean;
      signatureValid?: boolean;
    };
    certificate?: {
      chainValid?: boolean;
      trusted?: boolean;
      validAtSigningTime?: boolean;
    };
    modificationsAfter?: {
      level?: 'NONE' | 'SIGNATURES_ONLY' | 'FORM_FILL' | 'ANNOTATIONS' | 'METADATA' | 'OTHER';
      details?: Array<{
        object?: number;
        revision?: number;
        kind?: 'added' | 'changed' | 'deleted' | 're-pointed' | 'emptied' | 'structure';
        level?: 'NONE' | 'SIGNATURES_ONLY' | 'FORM_FILL' | 'ANNOTATIONS' | 'METADATA' | 'OTHER';
        issue?: string;
        attack?: 'EVIL_ANNOTATION' | 'SIGNATURE_APPEARANCE_WITHOUT_SIGNATURE';
        field?: string;
        ltaUpdate?: boolean;
      }>;
    };
    docMdp?: {
      permission?: 1 | 2 | 3;
      respected?: boolean;
      lockedFields?: Array<string> | 'ALL';
    };
    indication?: 'TOTAL_PASSED' | 'INDETERMINATE' | 'TOTAL_FAILED';
    subIndication?: string;
    issuedByThisService?: boolean;
    revision?: number;
    certifying?: boolean;
    orphaned?: boolean;
    valid?: boolean;
    problems?: Array<string>;
    warnings?: Array<string>;
  }>;
  unsignedSignatureFields?: Array<{
    fieldName?: string;
    hasAppearance?: boolean;
  }>;
  document: {
    sha256?: string;
    revisions?: number;
    size?: number;
  };
  auditTrail?: {
    hashMatches?: boolean;
    coveredBySignature?: boolean;
    [key: string]: unknown;
  };
};

export interface VerifyEmailQuery {
  email: string;
  code: string;
}

export type VerifyEmailResponse = {
  apiKey: string;
  keyId: string;
  email: string;
  createdAt: string;
  message: string;
};
