/**
 * The document-open event (docs/api.md § Telemetry ingest and § Client library): one fire-and-forget POST per open. No credentials, no retry, no
 * queue; every failure is swallowed and nothing waits on it. Sent: the library version, the page's origin and
 * path (never its query or fragment), hostname, user agent, screen size, the configured metadata, and per
 * event the time, documentId and creation time. Nothing of the content, no user identity.
 */
import { LIBRARY_VERSION } from './version.js';

export interface OpenEvent {
  timestamp: string;
  documentId: string;
  documentCreatedAt: string | null;
}

export interface TelemetryTarget {
  endpoint: string;
  licenseKey: string;
  metadata?: Record<string, unknown>;
}

/** fetch keepalive bodies share a 64 KB budget per page; stay well inside it. */
const KEEPALIVE_MAX_BODY = 48 * 1024;

interface BrowserInfo {
  userAgent: string;
  currentUrl: string;
  hostname: string;
  screenSize: { width: number; height: number };
}

function browserInfo(): BrowserInfo {
  const g = globalThis as {
    location?: { origin?: string; pathname?: string; hostname?: string };
    navigator?: { userAgent?: string };
    screen?: { width?: number; height?: number };
  };
  const origin = g.location?.origin;
  return {
    userAgent: g.navigator?.userAgent ?? '',
    // Origin and path only: a query string or fragment can carry tokens and personal data.
    currentUrl: origin && origin !== 'null' ? origin + (g.location?.pathname ?? '') : '',
    hostname: g.location?.hostname ?? '',
    screenSize: { width: g.screen?.width ?? 0, height: g.screen?.height ?? 0 },
  };
}

export function openEventBody(target: TelemetryTarget, event: OpenEvent): string {
  const body: Record<string, unknown> = { libraryVersion: LIBRARY_VERSION, browserInfo: browserInfo() };
  if (target.metadata !== undefined) body.metadata = target.metadata;
  body.events = [event];
  return JSON.stringify(body);
}

/** Starts the request and returns at once; never throws, never rejects. */
export function sendOpenEvent(target: TelemetryTarget, event: OpenEvent): void {
  try {
    if (typeof fetch !== 'function') return;
    const body = openEventBody(target, event);
    fetch(target.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-License-Key': target.licenseKey },
      body,
      credentials: 'omit',
      mode: 'cors',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
      keepalive: body.length <= KEEPALIVE_MAX_BODY,
    }).then(
      (res) => res.body?.cancel().catch(() => undefined),
      () => undefined,
    );
  } catch {
    // Telemetry must never break or delay an open (e.g. a malformed endpoint URL, serialising metadata).
  }
}
