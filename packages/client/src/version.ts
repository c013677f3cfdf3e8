/** Sent as `libraryVersion` with every telemetry event; kept equal to package.json's version. */
export const LIBRARY_VERSION = '0.9.0';
