import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, errorBody, validationError } from '../platform/errors.ts';
import { checkJsonText, decodeUtf8 } from '../platform/text.ts';

/**
 * Reads the body up to `limit` bytes; past it, 413 `body_too_large` without reading the rest.
 * Listeners rather than `for await`: an async iterator per request cost more than the read.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause(); // the rest is never read; the 413 closes the connection (tooLarge)
        return done(tooLarge(limit));
      }
      chunks.push(chunk);
    };
    const onEnd = () => done();
    // Closed before its end (the client went away): the read fails as the iterator's did.
    const onClose = () => done(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    req.on('data', onData).on('end', onEnd).on('error', done).on('close', onClose);
  });
}

// The rest of the body is left unread, so the connection cannot carry another request: every
// surface answering this error closes it after the 413 (the header travels with the error).
const tooLarge = (limit: number) =>
  new DomainError('body_too_large', `The request body is larger than ${limit} bytes`, { headers: { Connection: 'close' } });

/** JSON object bodies only; an empty body reads as {} so body-less POSTs need no Content-Type. */
export function parseJsonBody(req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    throw validationError('Content-Type', 'Request bodies must be JSON: send Content-Type: application/json');
  }
  const text = decodeUtf8(raw);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw validationError('body', 'The request body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError('body', 'The request body must be a JSON object');
  }
  checkJsonText(body, 'body');
  return body;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: DomainError, requestId: string): void {
  sendJson(res, err.status, errorBody(err, requestId), err.headers ?? {});
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
