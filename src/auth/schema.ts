/** The auth routes (docs/api.md § Getting a key): register and verify (no key), key listing and revocation (key). */
import { Nullable, Type, type Static } from '../http/schema.js';

const Email = Type.String({ minLength: 3, maxLength: 254, description: 'E-mail address', examples: ['ada@example.org'] });

export const RegisterQuery = Type.Object({ email: Email });
export type RegisterQueryString = Static<typeof RegisterQuery>;

export const RegisterResponse = Type.Object(
  { message: Type.String(), email: Type.String(), expiresInSeconds: Type.Integer() },
  { examples: [{ message: 'Check your email for verification code.', email: 'ada@example.org', expiresInSeconds: 900 }] },
);
export type RegisterResponseBody = Static<typeof RegisterResponse>;

export const VerifyEmailQuery = Type.Object({
  email: Email,
  code: Type.String({ pattern: '^[0-9]{6}$', description: '6 digits', examples: ['123456'] }),
});
export type VerifyEmailQueryString = Static<typeof VerifyEmailQuery>;

export const VerifyEmailResponse = Type.Object({
  apiKey: Type.String({ description: 'Shown only this once', examples: ['folio_sk_…'] }),
  keyId: Type.String(),
  email: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  message: Type.String(),
});
export type VerifyEmailResponseBody = Static<typeof VerifyEmailResponse>;

export const KeyInfo = Type.Object({
  keyId: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
  current: Type.Boolean({ description: 'The key of this request' }),
});
export const KeysResponse = Type.Object({ keys: Type.Array(KeyInfo) });
export type KeysResponseBody = Static<typeof KeysResponse>;

export const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 64 }) });
