/**
 * Stream decoding for what the verifier has to read inside a PDF: xref streams, object streams and the
 * embedded audit-trail file. Only FlateDecode (with PNG/TIFF predictors) and ASCIIHexDecode are needed;
 * output is capped so a compression bomb costs at most the cap, and truncated deflate data yields what
 * could be inflated (Z_SYNC_FLUSH) instead of an exception, as viewers do.
 */
import zlib from 'node:zlib';
import { isName, isDict, type PdfStream, type PdfValue } from './objects.js';

export class StreamDecodeError extends Error {}

export function decodeStream(buf: Uint8Array, stream: PdfStream, maxOutput: number): Uint8Array {
  let data: Uint8Array = buf.subarray(stream.dataStart, stream.dataEnd);
  const filters = asList(stream.dict.map.get('Filter'));
  const parms = asList(stream.dict.map.get('DecodeParms'));
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i];
    if (!isName(f)) throw new StreamDecodeError('filter is not a name');
    const p = parms[i];
    switch (f.name) {
      case 'FlateDecode':
      case 'Fl':
        data = inflate(data, maxOutput);
        if (isDict(p)) data = unpredict(data, p.map);
        break;
      case 'ASCIIHexDecode':
      case 'AHx':
        data = Buffer.from(
          Buffer.from(data)
            .toString('latin1')
            .replace(/[^0-9a-fA-F]/g, ''),
          'hex',
        );
        break;
      default:
        throw new StreamDecodeError(`unsupported filter ${f.name}`);
    }
  }
  if (data.length > maxOutput) throw new StreamDecodeError('stream too large');
  return data;
}

function asList(v: PdfValue | undefined): PdfValue[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function inflate(data: Uint8Array, maxOutput: number): Uint8Array {
  try {
    return zlib.inflateSync(data, { maxOutputLength: maxOutput, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new StreamDecodeError('stream inflates beyond the limit');
    try {
      // Some writers emit raw deflate without the zlib header.
      return zlib.inflateRawSync(data, { maxOutputLength: maxOutput, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch {
      throw new StreamDecodeError('corrupt FlateDecode data');
    }
  }
}

function unpredict(data: Uint8Array, parms: Map<string, PdfValue>): Uint8Array {
  const predictor = numberOr(parms.get('Predictor'), 1);
  if (predictor < 10) return data; // 1 = none; TIFF 2 never occurs in xref streams
  const colors = numberOr(parms.get('Colors'), 1);
  const bpc = numberOr(parms.get('BitsPerComponent'), 8);
  const columns = numberOr(parms.get('Columns'), 1);
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLen = Math.ceil((colors * bpc * columns) / 8);
  if (rowLen <= 0 || rowLen > 1 << 20) throw new StreamDecodeError('bad predictor columns');
  const rows = Math.floor(data.length / (rowLen + 1));
  const out = new Uint8Array(rows * rowLen);
  const prev = new Uint8Array(rowLen);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLen + 1)]!;
    const src = r * (rowLen + 1) + 1;
    const row = out.subarray(r * rowLen, (r + 1) * rowLen);
    for (let i = 0; i < rowLen; i++) {
      const raw = data[src + i]!;
      const left = i >= bpp ? row[i - bpp]! : 0;
      const up = prev[i]!;
      const upLeft = i >= bpp ? prev[i - bpp]! : 0;
      let v: number;
      switch (type) {
        case 0:
          v = raw;
          break;
        case 1:
          v = raw + left;
          break;
        case 2:
          v = raw + up;
          break;
        case 3:
          v = raw + ((left + up) >> 1);
          break;
        case 4: {
          const p = left + up - upLeft;
          const pa = Math.abs(p - left),
            pb = Math.abs(p - up),
            pc = Math.abs(p - upLeft);
          v = raw + (pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft);
          break;
        }
        default:
          throw new StreamDecodeError(`bad PNG predictor row type ${type}`);
      }
      row[i] = v & 0xff;
    }
    prev.set(row);
  }
  return out;
}

const numberOr = (v: PdfValue | undefined, d: number) => (typeof v === 'number' ? v : d);
