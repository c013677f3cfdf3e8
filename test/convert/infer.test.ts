/** Source-format sniffing runs on the request thread: it must stay linear on hostile text. */
import { describe, expect, it } from 'vitest';
import { inferSourceFormat } from '../../src/convert/index.js';

const sniff = (text: string, name = '') => inferSourceFormat(name, Buffer.from(text));

describe('inferSourceFormat', () => {
  it('recognises HTML after a BOM, white space and leading comments', () => {
    expect(sniff('<!-- a --> <!--b-->\n<!DOCTYPE html><p>x')).toBe('html');
    expect(sniff('\uFEFF  <html><body>')).toBe('html');
    expect(sniff('<?xml version="1.0"?>\n<html>')).toBe('html');
    expect(sniff('<body>')).toBe('html');
  });

  it('takes the rest for Markdown', () => {
    expect(sniff('# Title')).toBe('md');
    expect(sniff('<!-- unterminated <html>')).toBe('md');
  });

  it('answers at once for thousands of empty comments (the old regex backtracked exponentially)', () => {
    // 40 repetitions took hours with `(<!--[\s\S]*?-->\s*)*`; the vitest timeout is the bound here.
    expect(sniff(`${'<!---->'.repeat(1_100)}x`)).toBe('md');
    expect(sniff(`${'<!---->'.repeat(1_100)}<html>`)).toBe('html');
  });
});
