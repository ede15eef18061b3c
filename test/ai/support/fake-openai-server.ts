/**
 * A real HTTP server on 127.0.0.1 that speaks just enough of the OpenAI chat completions API
 * (POST /v1/chat/completions) for the provider tests. Its behaviour is switched per test; every
 * request it receives is recorded so that tests can check what the engine sent.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `hang`: never answers. `stall`: sends the response head and the start of a body, then nothing more. `endless`:
 * a 200 whose JSON body never ends, written as fast as the client reads it.
 */
export type FakeMode = 'ok' | 'error' | 'hang' | 'empty' | 'stall' | 'endless';

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
  /** Body bytes written in `endless` mode, counted as the client takes them. */
  readonly endlessBytes: number;
  reply: string;
  close(): Promise<void>;
}

export async function startFakeOpenAiServer(): Promise<FakeOpenAiServer> {
  const state = {
    mode: 'ok' as FakeMode,
    reply: 'Citra hops give citrus and tropical fruit flavours [1].',
    requests: [] as RecordedRequest[],
    endlessBytes: 0,
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
      if (state.mode === 'stall') {
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":"chatcmpl-fake",');
        return;
      }
      if (state.mode === 'endless') {
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":"');
        const chunk = Buffer.alloc(64 * 1024, 'a');
        // Writes only as fast as the client reads (drain), so the count is what the client took in.
        const more = () => {
          while (!res.destroyed) {
            state.endlessBytes += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
        };
        res.on('close', () => res.off('drain', more));
        more();
        return;
      }
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
    get endlessBytes() {
      return state.endlessBytes;
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
