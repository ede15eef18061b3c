/**
 * Optional external composer: an OpenAI-compatible chat completions endpoint given only the
 * retrieved excerpts, told to answer from them and cite them by number. One client per engine
 * (connection reuse), no retries (the local reply is the fallback, and a retry would only double
 * the wait), and a timeout on every call.
 */
import OpenAI from 'openai';
import { AI_PROVIDER_TIMEOUT_MS } from '../limits.js';
import type { RankedPost } from './types.js';

export interface ChatProviderConfig {
  /** e.g. https://api.openai.com/v1 or a local server's /v1. */
  baseURL: string;
  apiKey: string;
  model: string;
  timeoutMs?: number;
  maxTokens?: number;
}

export interface ChatProvider {
  complete(message: string, context: readonly RankedPost[]): Promise<string>;
}

const SYSTEM_PROMPT = [
  "You answer questions for a community Q&A site using only the numbered excerpts from the site's own",
  'questions and answers. Cite the excerpts you use as [1], [2], … right after the claim they support.',
  'If the excerpts do not answer the question, say that the site has no answer to it; never add facts',
  'that are not in the excerpts. Be brief: a few sentences.',
].join(' ');

export function buildProviderMessages(
  message: string,
  context: readonly RankedPost[],
): OpenAI.Chat.ChatCompletionMessageParam[] {
  const excerpts = context
    .map(({ post, sentences }, i) => {
      const kind = post.answerId === undefined ? 'question' : post.isAccepted ? 'accepted answer' : 'answer';
      return `[${i + 1}] (${kind}, ${post.votes} votes) ${post.title}\n${sentences.join(' ')}`;
    })
    .join('\n\n');
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: `Excerpts:\n\n${excerpts}\n\nQuestion: ${message}` },
  ];
}

/** A chat completion of a few hundred tokens is a few kilobytes; a longer answer is not one. */
export const AI_PROVIDER_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * fetch bounded as a whole: the SDK's own timeout ends once the response head has arrived, so a provider that
 * then stalls, or streams an endless body, would hold the job forever and fill the worker's memory. Here the
 * deadline also covers reading the body, and a body past `maxBytes` is an error.
 */
export function boundedFetch(timeoutMs: number, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const response = await fetch(input, { ...init, signal });
    if (!response.body) return response;
    let received = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > maxBytes) controller.error(new Error(`response body over ${maxBytes} bytes`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

export function createChatProvider(config: ChatProviderConfig): ChatProvider {
  const timeoutMs = config.timeoutMs ?? AI_PROVIDER_TIMEOUT_MS;
  const client = new OpenAI({
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    timeout: timeoutMs,
    maxRetries: 0,
    fetch: boundedFetch(timeoutMs, AI_PROVIDER_MAX_RESPONSE_BYTES),
  });
  return {
    async complete(message, context) {
      const completion = await client.chat.completions.create({
        model: config.model,
        messages: buildProviderMessages(message, context),
        max_tokens: config.maxTokens ?? 400,
        temperature: 0.2,
      });
      const reply = completion.choices[0]?.message?.content?.trim();
      // An empty answer is a failure too: the caller falls back to the local reply.
      if (!reply) throw new Error('chat provider returned an empty reply');
      return reply;
    },
  };
}
