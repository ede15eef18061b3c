import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendOnce } from '../../shared/delivery/send.js';

// An https target is connected to by address, yet the TLS name sent (SNI) and the certificate checked are the URL's
// host. A receiver with a certificate nobody signed is an error (retried), never a delivery.

describe('https deliveries', () => {
  let server: https.Server;
  let port: number;
  let dir: string;
  const names: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'agora-delivery-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=receiver.test',
        '-addext',
        'subjectAltName=DNS:receiver.test',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const context = tls.createSecureContext({
      key: readFileSync(path.join(dir, 'key.pem')),
      cert: readFileSync(path.join(dir, 'cert.pem')),
    });
    server = https.createServer(
      {
        SNICallback: (name, done) => {
          names.push(name);
          done(null, context);
        },
      },
      (_req, res) => res.writeHead(200).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the URL host as TLS name and refuses a certificate that does not chain to a trusted root', async () => {
    const result = await sendOnce(`https://receiver.test:${port}/hook`, {}, '{}', {
      timeoutMs: 10_000,
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
    });
    expect(names).toEqual(['receiver.test']);
    expect(result).toMatchObject({ error: expect.stringMatching(/SELF_SIGNED|self.signed/i) });
    expect(result).not.toHaveProperty('blocked');
  });
});
