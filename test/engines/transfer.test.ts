/**
 * Answers as large as the output budget are moved from engine threads, not copied: each tasks file's
 * `transfer` names the buffer of a fresh answer, and never a view into a buffer the thread still uses.
 */
import { describe, expect, it } from 'vitest';
import { wholeBuffer } from '../../src/engines/tasks.js';
import { transfer as convertTransfer } from '../../src/convert/tasks.js';
import { transfer as mergeTransfer } from '../../src/merge/tasks.js';
import { transfer as signTransfer } from '../../src/sign/tasks.js';

describe('engine answers moved, not copied', () => {
  it('moves a buffer the answer owns whole and nothing else', () => {
    const own = new Uint8Array(16);
    expect(wholeBuffer(own)).toEqual([own.buffer]);
    const view = new Uint8Array(new ArrayBuffer(32), 8, 16);
    expect(wholeBuffer(view)).toEqual([]);
    const shared = new Uint8Array(new SharedArrayBuffer(8));
    expect(wholeBuffer(shared)).toEqual([]);
  });
  it('merge, sign and DOCX→text name their answer bytes', () => {
    const signed = new Uint8Array(32);
    expect(signTransfer?.['sign.seal']?.({ pdf: signed })).toEqual([signed.buffer]);
    const pdf = new Uint8Array(64);
    expect(mergeTransfer?.['merge.pdfs']?.({ pdf, pageCount: 1, warnings: [] })).toEqual([pdf.buffer]);
    const bytes = new Uint8Array(8);
    expect(convertTransfer?.['convert.fromDocx']?.({ bytes, warnings: [] })).toEqual([bytes.buffer]);
  });
});
