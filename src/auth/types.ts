/** The auth capability's public types. */
import type { AuthenticatedKey, KeyAuthenticator } from '../http/types.js';

// The key the HTTP layer admits and what admits it are declared by the HTTP layer (src/http/types.ts).
export type { AuthenticatedKey, KeyAuthenticator };

export interface IssuedKey {
  apiKey: string;
  keyId: string;
  email: string;
  createdAt: string;
}

export interface KeySummary {
  keyId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  current: boolean;
}

export interface AuthService extends KeyAuthenticator {
  /** Sends a code to the address (or pretends to, identically, when rate limited per address). */
  register(email: string, clientId: string): Promise<{ expiresInSeconds: number }>;
  verify(email: string, code: string, clientId: string): Promise<IssuedKey>;
  listKeys(caller: AuthenticatedKey): Promise<KeySummary[]>;
  /** False when the key does not exist or belongs to another owner. */
  revokeKey(caller: AuthenticatedKey, keyId: string): Promise<boolean>;
  /** Issues a key directly (operator tooling and tests; no e-mail round trip). */
  issueKey(email: string): Promise<IssuedKey>;
  close(): Promise<void>;
}
