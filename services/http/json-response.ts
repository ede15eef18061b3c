import type { FastifyReply } from 'fastify';
import { JsonText } from '../../shared/db/json-text.js';

const JSON_TYPE = 'application/json; charset=utf-8';

const write = (value: unknown): string =>
  value instanceof JsonText ? value.text : (JSON.stringify(value) ?? 'null');

/**
 * Sends `{"success":true,"data":…}` as text the handler assembled, for reads whose rows PostgreSQL rendered as JSON
 * (shared/db/json-text.ts): the rows' text is copied into the body, never parsed and re-serialised. The route keeps
 * its response schema (OpenAPI, the typed client), but Fastify does not run its serialiser on a string, so the
 * caller owns the bytes: data's members in the order of the schema's properties, no property the schema lacks,
 * JSON texts rendered with the schema's key order (what fast-json-stringify would have written).
 */
export function sendData(reply: FastifyReply, data: JsonText | Record<string, unknown>): FastifyReply {
  let body: string;
  if (data instanceof JsonText) body = data.text;
  else {
    const members: string[] = [];
    for (const [key, value] of Object.entries(data)) {
      if (value !== undefined) members.push(`${JSON.stringify(key)}:${write(value)}`);
    }
    body = `{${members.join(',')}}`;
  }
  return reply.type(JSON_TYPE).send(`{"success":true,"data":${body}}`);
}
