/**
 * Reads the single `file` field of a multipart request into memory (bounded by @fastify/multipart's
 * 25 MB fileSize limit, enforced while streaming) plus the plain text fields sent with it.
 */
import type { FastifyRequest } from 'fastify';
import { FolioError } from '../errors.js';

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
        await part.toBuffer().catch(() => undefined);
        throw new FolioError('VALIDATION_ERROR', `Unexpected file field "${part.fieldname}"`, {
          details: [{ field: part.fieldname, issue: `only "${fieldName}" is accepted` }],
        });
      }
      if (file) {
        throw new FolioError('VALIDATION_ERROR', `Exactly one "${fieldName}" is expected`, {
          details: [{ field: fieldName, issue: 'more than one file' }],
        });
      }
      const buf = await part.toBuffer();
      file = { filename: part.filename ?? '', mimetype: part.mimetype, bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length), fields };
      found(file);
    } else {
      fields[part.fieldname] = String(part.value);
    }
  }
}
