/**
 * Word's automatic line spacing moved to the whole per cent LibreOffice reads nearest (src/office/line-spacing.ts):
 * LibreOffice 7.4 truncates N/240 to a per cent, so Office's default 278 (115.83 %) was laid out at 115 %.
 */
import { describe, expect, it } from 'vitest';
import { nearestPercentLine, wordLineSpacing } from '../../src/office/line-spacing.js';

const truncatedPercent = (n: number) => Math.floor((n * 100) / 240);

describe('automatic line spacing for LibreOffice', () => {
  it('moves each value to the smallest one read as the nearest per cent', () => {
    expect(nearestPercentLine(278)).toBe(279); // Office 2023 default: 115.83 % → 116 %, not 115 %
    expect(nearestPercentLine(259)).toBe(260); // Office 2013 default: 107.92 % → 108 %
    expect(nearestPercentLine(276)).toBe(276); // 115 % exactly
    expect(nearestPercentLine(240)).toBe(240);
    expect(nearestPercentLine(241)).toBe(241); // 100.42 %: 100 % is already nearest
    for (let n = 1; n <= 2400; n++) {
      const fixed = nearestPercentLine(n);
      expect(truncatedPercent(fixed), `w:line=${n}`).toBe(Math.round((n * 100) / 240));
      expect(fixed - n).toBeGreaterThanOrEqual(0);
      expect(fixed - n).toBeLessThanOrEqual(2);
    }
  });

  it('rewrites auto rules only, with or without an explicit lineRule, and leaves run spacing alone', () => {
    const xml =
      '<w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="278" w:lineRule="auto"/></w:pPr></w:pPrDefault>' +
      '<w:p><w:pPr><w:spacing w:line="259"/></w:pPr></w:p>' +
      '<w:p><w:pPr><w:spacing w:line="278" w:lineRule="exact"/></w:pPr></w:p>' +
      '<w:p><w:pPr><w:spacing w:lineRule="atLeast" w:line="278"/></w:pPr></w:p>' +
      '<w:r><w:rPr><w:spacing w:val="5"/></w:rPr></w:r>';
    expect(wordLineSpacing(xml)).toBe(
      '<w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="279" w:lineRule="auto"/></w:pPr></w:pPrDefault>' +
        '<w:p><w:pPr><w:spacing w:line="260"/></w:pPr></w:p>' +
        '<w:p><w:pPr><w:spacing w:line="278" w:lineRule="exact"/></w:pPr></w:p>' +
        '<w:p><w:pPr><w:spacing w:lineRule="atLeast" w:line="278"/></w:pPr></w:p>' +
        '<w:r><w:rPr><w:spacing w:val="5"/></w:rPr></w:r>',
    );
    const plain = '<w:p><w:pPr><w:spacing w:line="276" w:lineRule="auto"/></w:pPr></w:p>';
    expect(wordLineSpacing(plain)).toBe(plain);
  });
});
