import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * Every route an app registers, as Fastify saw it (method, url, schema). The fuzz suite (test/fuzz) reads it, so a
 * new route is fuzzed without anyone listing it.
 */
const tables = new WeakMap<object, RouteOptions[]>();

export function recordRoutes(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  tables.set(app, routes);
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
}

export const routeTable = (app: object): readonly RouteOptions[] => tables.get(app) ?? [];
