/**
 * Reads the single `file` field of a multipart request into memory (bounded by @fastify/multipart's
 * 25 MB fileSize limit, enforced while streaming) plus the plain text fields sent with it. The file is
 * streamed into one buffer of at most the request's Content-Length (body-buffer.ts), not collected as a
 * chunk list and concatenated (`part.toBuffer()`: twice the file at its end); a chunked body's bytes count
 * against its in-flight reservation as they arrive (admission.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { FolioError } from '../errors.js';
import { countArrivedBytes } from './admission.js';
import { announcedLength, readIntoBuffer } from './body-buffer.js';

/** The largest file part (@fastify/multipart's fileSize limit, app.ts). */
const MAX_FILE_BYTES = 25 * 1024 * 1024;

export interface UploadedFile {
  filename: string;
  mimetype: string;
  bytes: Uint8Array;
  fields: Record<string, string>;
}

export async function readSingleFile(request: FastifyRequest, fieldName = 'file'): Promise<UploadedFile> {
  if (!request.isMultipart()) {
    throw new FolioError('UNSUPPORTED_MEDIA_TYPE', 'Send the document as multipart/form-data with a "file" field');
  }
  let file: UploadedFile | undefined;
  const fields: Record<string, string> = {};
  try {
    await readParts(request, fieldName, fields, (f) => {
      file = f;
    });
  } catch (e) {
    // @fastify/multipart allows one file (limits.files) and reports a second one as a 413 limit error: that
    // is a malformed request, not a large one.
    if ((e as { code?: string }).code === 'FST_FILES_LIMIT') {
      throw new FolioError('VALIDATION_ERROR', `Exactly one "${fieldName}" is expected`, {
        details: [{ field: fieldName, issue: 'more than one file' }],
      });
    }
    throw e;
  }
  if (!file) {
    throw new FolioError('VALIDATION_ERROR', `The multipart body has no "${fieldName}" field`, {
      details: [{ field: fieldName, issue: 'required' }],
    });
  }
  return file;
}

async function readParts(
  request: FastifyRequest,
  fieldName: string,
  fields: Record<string, string>,
  found: (file: UploadedFile) => void,
): Promise<void> {
  let file: UploadedFile | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== fieldName) {
        part.file.resume();
        throw new FolioError('VALIDATION_ERROR', `Unexpected file field "${part.fieldname}"`, {
          details: [{ field: part.fieldname, issue: `only "${fieldName}" is accepted` }],
        });
      }
      if (file) {
        throw new FolioError('VALIDATION_ERROR', `Exactly one "${fieldName}" is expected`, {
          details: [{ field: fieldName, issue: 'more than one file' }],
        });
      }
      const buf = await readFilePart(request, part);
      file = { filename: part.filename ?? '', mimetype: part.mimetype, bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length), fields };
      found(file);
    } else {
      fields[part.fieldname] = String(part.value);
    }
  }
}

/**
 * One file part into one buffer: preallocated at the request's Content-Length (the part is shorter by the
 * multipart framing and the other fields), or collected and joined once for a chunked body. The fileSize
 * limit stays @fastify/multipart's (its stream errors with FST_REQ_FILE_TOO_LARGE past it).
 */
export async function readFilePart(
  request: FastifyRequest,
  part: MultipartFile,
  /** Bytes of the body still unread, when parts came before this one (merge's files); Content-Length by default. */
  remaining?: number,
): Promise<Buffer> {
  const announced = remaining ?? announcedLength(request.headers['content-length']);
  const tooLargeMessage = 'The request body exceeds the size limit (25 MB per document)';
  const buf = await readIntoBuffer(part.file, {
    limit: MAX_FILE_BYTES,
    ...(announced !== undefined ? { capacity: announced } : {}),
    onBytes: (n) => countArrivedBytes(request, n),
    tooLargeMessage,
  });
  // busboy stops a part at the fileSize limit and marks it truncated (what toBuffer() turns into its 413).
  if (part.file.truncated) throw new FolioError('FILE_TOO_LARGE', tooLargeMessage);
  return buf;
}
