/** The lossless XML tree now lives in src/docx/xml.ts (shared with office); annotate keeps importing it from here. */
export * from '../docx/xml.js';
