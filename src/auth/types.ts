/** The auth capability's public types. */
export interface AuthenticatedKey {
  keyId: string;
  email: string;
}

export interface KeyAuthenticator {
  /** Resolves a raw `folio_sk_…` key to its owner, or null when malformed, unknown or revoked. */
  authenticate(rawKey: string): Promise<AuthenticatedKey | null>;
  /**
   * Optional synchronous answer from an in-process cache: the owner, null (known revoked), or undefined
   * when only `authenticate` can tell. Lets the HTTP hook admit a cached key without a promise.
   */
  authenticateCached?(rawKey: string): AuthenticatedKey | null | undefined;
}

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
