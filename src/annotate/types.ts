/** The annotate request and report (docs/api.md § Annotate), as the engine sees them (no HTTP). */
import type { CalendarDate } from './dates.js';
import type { PreparedImage } from './images.js';

export const FIELD_TYPES = ['text', 'image', 'signature', 'table', 'checkbox', 'date', 'html', 'link'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldOptions {
  /** text: keep the field's first run formatting (default true). */
  keepTextNodeStyles?: boolean;
  /** image/signature: size in px; one side alone keeps the aspect ratio. */
  dimensions?: { width?: number | string; height?: number | string };
  /** table: new rows copy the last row (its cell and run formatting). */
  copyRowStyle?: boolean;
  /** table: which table of a control that holds several (default 0). */
  tableIndex?: number;
  /** Replace the control by its filled content (the result is no longer a template there). */
  flatten?: boolean;
  /** date: a Word date picture ("dd/MM/yyyy"); overrides the control's w:dateFormat. */
  format?: string;
  /** date: language for month and day names (BCP 47); overrides the control's w:lid. */
  locale?: string;
  /** image/signature: alternative text. */
  alt?: string;
  /** Accepted for SuperDoc compatibility; signature styling beyond the typed image is not drawn. */
  arcElement?: unknown;
  topLabel?: unknown;
  bottomLabel?: unknown;
}

export interface AnnotateField {
  id?: string;
  group?: string;
  type: FieldType;
  value: unknown;
  options?: FieldOptions;
}

export type ResolvedValue =
  | { type: 'text'; text: string }
  | { type: 'image'; image: PreparedImage }
  | { type: 'table'; rows: string[][] }
  | { type: 'checkbox'; checked: boolean }
  | { type: 'date'; date: CalendarDate }
  | { type: 'html'; html: string }
  | { type: 'link'; url: string; text: string };

export interface FilledEntry {
  id: string;
  type: FieldType;
  occurrences: number;
}

export interface AnnotateReport {
  filled: FilledEntry[];
  /** ids/groups of the request found nowhere in the template. */
  unmatched: string[];
  /** Template fields no request field reached. */
  unfilled: string[];
  /** Things done differently than asked (dropped HTML content, duplicate request ids...). */
  warnings: string[];
}

export interface AnnotateOptions {
  /** Replace every content control by its content in the result. */
  flatten?: boolean;
}
