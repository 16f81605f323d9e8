import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { ApiError, errors } from '../../lib/errors';
import type { AppMiddleware, UploadedFile } from '../context';

export interface MultipartOptions {
  /** The form field holding the file. */
  file: string;
  /** The file's own limit (the request's limit is the body limit: the file plus its envelope). */
  maxFileBytes: number;
  /** Text fields read (others are ignored), each at most this long. */
  fields: string[];
  maxFieldBytes: number;
}

/**
 * Reads a `multipart/form-data` body (already read whole, under the route's body limit) with busboy: one file in the
 * named field, a few text fields. The fields become the request's body (validated by the route's zod schema), the
 * file `ctx.state.upload`. A file over its limit is 413 `payload_too_large`; a second file, or a body that is not
 * multipart, is 400. `ctx.state.bodyDigest` is what the request is, independent of its random boundary: an upload
 * retried with the same `Idempotency-Key` is recognized as the same request.
 */
export function readMultipart(opts: MultipartOptions): AppMiddleware {
  return async function multipartMiddleware(ctx, next) {
    const type = ctx.get('Content-Type');
    if (!/^multipart\/form-data\s*;/i.test(type)) {
      throw errors.badRequest(`Send the file as multipart/form-data, in a field named \`${opts.file}\``);
    }
    const { fields, file } = await parse(ctx.state.rawBody ?? Buffer.alloc(0), type, opts);
    (ctx.request as { body?: unknown }).body = fields;
    if (file) ctx.state.upload = file;
    const digest = createHash('sha256');
    for (const name of Object.keys(fields).sort()) digest.update(`${name}\u0000${fields[name]}\u0000`);
    if (file) digest.update(`${opts.file}\u0000${file.name}\u0000${file.declaredType}\u0000`).update(file.bytes);
    ctx.state.bodyDigest = digest.digest();
    await next();
  };
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

function parse(
  raw: Buffer,
  contentType: string,
  opts: MultipartOptions,
): Promise<{ fields: Record<string, string>; file?: UploadedFile }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: {
          files: 1,
          fields: 20,
          fieldSize: opts.maxFieldBytes, // One byte more than allowed: a file of exactly the limit is not cut.
          fileSize: opts.maxFileBytes + 1,
          parts: 40,
        },
      });
    } catch (err) {
      return reject(errors.badRequest(`The multipart body could not be read: ${(err as Error).message}`));
    }
    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    let failed: ApiError | undefined;
    const fail = (err: ApiError) => (failed ??= err);
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(errors.badRequest(`${name}: too long`));
      if (opts.fields.includes(name)) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () =>
        fail(new ApiError('payload_too_large', `The file is larger than the limit of ${mib(opts.maxFileBytes)}`)),
      );
      stream.on('close', () => {
        if (name !== opts.file) return;
        if (file) fail(errors.badRequest(`Send one file at a time, in the field \`${opts.file}\``));
        file = { name: info.filename ?? '', declaredType: info.mimeType ?? '', bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('filesLimit', () => fail(errors.badRequest(`Send one file at a time, in the field \`${opts.file}\``)));
    parser.on('error', (err: Error) =>
      reject(failed ?? errors.badRequest(`The multipart body could not be read: ${err.message}`)),
    );
    parser.on('close', () => (failed ? reject(failed) : resolve({ fields, ...(file ? { file } : {}) })));
    parser.end(raw);
  });
}
