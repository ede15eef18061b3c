import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** The response is exactly the error body `{error, message, code}` with this status; returns the message. */
export function expectErrorBody(res: LightMyRequestResponse, code: number): string {
  expect({ status: res.statusCode, body: res.body.slice(0, 300) }).toMatchObject({ status: code });
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message']);
  expect(body).toEqual({ error: true, message: expect.any(String), code });
  return body.message;
}

export interface RawAnswer {
  /** The status line and headers of the answer, and its body. */
  head: string;
  body: string;
  /** Whether every byte of the upload was written without the connection failing. */
  uploaded: boolean;
  error?: string;
}

/**
 * Posts `bytes` of body with chunked transfer encoding (no Content-Length) over a plain socket, writing all of
 * it before reading anything, as a simple client does; then reads the answer until the server ends it.
 */
export function postChunked(
  port: number,
  path: string,
  bytes: number,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let uploaded = false;
    let error: string | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const text = Buffer.concat(received).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      let body = split < 0 ? '' : text.slice(split + 4);
      // The error body is small: a chunked answer is one chunk, the size line first.
      if (/transfer-encoding: chunked/i.test(head)) body = body.split('\r\n')[1] ?? '';
      socket.destroy();
      resolve({ head, body, uploaded, ...(error ? { error } : {}) });
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      const text = Buffer.concat(received).toString('utf8');
      if (uploaded && /\r\n\r\n[\s\S]*\}/.test(text)) finish();
    });
    socket.on('error', (err) => {
      error = err.message;
      finish();
    });
    socket.on('close', finish);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${extra}` +
        'Transfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        const ok = socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`, 'latin1');
        if (!ok) return void socket.once('drain', pump);
      }
      socket.write('0\r\n\r\n', () => {
        uploaded = true;
        if (/\r\n\r\n[\s\S]*\}/.test(Buffer.concat(received).toString('utf8'))) finish();
      });
    };
    pump();
  });
}
