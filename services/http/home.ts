import type { FastifyInstance } from 'fastify';

export interface ServiceHome {
  service: string;
  description: string;
  links: Record<string, string>;
}

/** `GET /` says what the service is and where its documentation is, instead of a 404. */
export function registerHome(app: FastifyInstance, home: ServiceHome): void {
  app.get('/', { schema: { hide: true } }, async () => home);
}
