export type { AuthenticatedKey, KeyAuthenticator, IssuedKey, KeySummary, AuthService } from './types.js';
