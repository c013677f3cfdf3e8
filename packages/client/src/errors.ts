/** Errors thrown by the library. Telemetry never throws: only reading or writing the document can. */
export class FolioClientError extends Error {
  constructor(
    readonly code: 'INVALID_FILE_FORMAT' | 'INVALID_INPUT' | 'UNSUPPORTED_ENVIRONMENT',
    message: string,
  ) {
    super(message);
    this.name = 'FolioClientError';
  }
}
