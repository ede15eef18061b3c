import type { TSchema } from '@fastify/type-provider-typebox';

/**
 * Names schemas as OpenAPI components: `nameComponents({ Question, Answer })` gives each its key as `title`, and the
 * document (services/http/openapi.ts) lists every titled schema once under `components.schemas` and refers to it
 * with `$ref` wherever a route uses it. Validation and serialisation are unchanged (`title` is an annotation).
 * Call it where the schemas are declared, before any route is registered.
 */
export function nameComponents(schemas: Record<string, TSchema>): void {
  for (const [name, schema] of Object.entries(schemas)) (schema as { title?: string }).title = name;
}
