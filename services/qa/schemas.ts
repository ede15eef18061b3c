import { Type, type TSchema } from '@fastify/type-provider-typebox';

/** Response schemas shared by the Q&A routes; they also generate the OpenAPI document. */

export const ErrorResponse = Type.Object(
  { error: Type.Literal(true), message: Type.String(), code: Type.Integer() },
  { $id: 'Error', description: 'Every error: the message is for humans, code equals the HTTP status' },
);

export const success = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });

export const Category = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Type.String(),
  questions_count: Type.Integer(),
  icon: Type.String({ description: 'An icon class name' }),
});
