import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { signV4 } from '../../lib/media/s3';

/**
 * A real HTTP server on loopback speaking the part of the S3 API the media store uses (PUT, GET, DELETE of an object,
 * path-style), checking each request's SigV4 signature and payload hash as S3 does (the signer itself is checked
 * against AWS's published examples in test/unit/media.test.ts). Objects live in memory.
 */
export async function startFakeS3(opts: { bucket: string; accessKeyId: string; secretAccessKey: string }) {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const requests: { method: string; key: string; status: number }[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      const [, bucket, ...rest] = url.pathname.split('/');
      const key = rest.map(decodeURIComponent).join('/');
      const answer = (status: number, payload: Buffer | string = '', type = 'application/xml') => {
        requests.push({ method: req.method ?? '', key, status });
        res.writeHead(status, { 'content-type': type }).end(payload);
      };
      const error = (status: number, code: string) =>
        answer(status, `<?xml version="1.0"?><Error><Code>${code}</Code></Error>`);

      const auth = String(req.headers.authorization ?? '');
      const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
      const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
      const expected = signV4({
        method: req.method ?? '',
        url,
        headers: Object.fromEntries(
          signed
            .filter((h) => !['host', 'x-amz-date', 'x-amz-content-sha256'].includes(h))
            .map((h) => [h, String(req.headers[h] ?? '')]),
        ),
        payloadHash,
        region: /Credential=[^/]+\/\d+\/([^/]+)\//.exec(auth)?.[1] ?? '',
        accessKeyId: opts.accessKeyId,
        secretAccessKey: opts.secretAccessKey,
        amzDate: String(req.headers['x-amz-date'] ?? ''),
      }).authorization;
      if (auth !== expected) return error(403, 'SignatureDoesNotMatch');
      if (createHash('sha256').update(body).digest('hex') !== payloadHash)
        return error(400, 'XAmzContentSHA256Mismatch');
      if (bucket !== opts.bucket) return error(404, 'NoSuchBucket');

      if (req.method === 'PUT') {
        objects.set(key, { body, contentType: String(req.headers['content-type'] ?? 'binary/octet-stream') });
        return answer(200);
      }
      if (req.method === 'GET') {
        const object = objects.get(key);
        if (!object) return error(404, 'NoSuchKey');
        return answer(200, object.body, object.contentType);
      }
      if (req.method === 'DELETE') {
        objects.delete(key);
        return answer(204);
      }
      return error(405, 'MethodNotAllowed');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
