/**
 * A real HTTP server on 127.0.0.1 that speaks just enough of the OpenAI chat completions API
 * (POST /v1/chat/completions) for the provider tests. Its behaviour is switched per test; every
 * request it receives is recorded so that tests can check what the engine sent.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeMode = 'ok' | 'error' | 'hang' | 'empty';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: { model?: string; messages?: Array<{ role: string; content: string }> };
}

export interface FakeOpenAiServer {
  baseURL: string;
  requests: RecordedRequest[];
  mode: FakeMode;
  reply: string;
  close(): Promise<void>;
}

export async function startFakeOpenAiServer(): Promise<FakeOpenAiServer> {
  const state = {
    mode: 'ok' as FakeMode,
    reply: 'Citra hops give citrus and tropical fruit flavours [1].',
    requests: [] as RecordedRequest[],
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      state.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : {},
      });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      if (state.mode === 'hang') return; // never answers: the client's timeout must fire
      if (state.mode === 'error') {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'upstream exploded' } }));
        return;
      }
      const content = state.mode === 'empty' ? '' : state.reply;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'fake-model',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    get mode() {
      return state.mode;
    },
    set mode(mode: FakeMode) {
      state.mode = mode;
    },
    get reply() {
      return state.reply;
    },
    set reply(reply: string) {
      state.reply = reply;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
