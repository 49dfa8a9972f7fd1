import type { FastifyInstance } from 'fastify';

/** One route of a fastify app: a method and a URL pattern (`/v1/agl/rollouts/:rollout_id`). */
export interface RouteEntry {
  method: string;
  url: string;
}

const LINE = /^([│ ]*)(?:├──|└──) (\S+) \(([A-Z, ]+)\)$/u;

/**
 * Every route the app has registered, read from fastify's own route table (`printRoutes`), so a route added later is
 * covered without editing the tests.
 */
export function routeTable(app: FastifyInstance): RouteEntry[] {
  const stack: string[] = [];
  const routes: RouteEntry[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const url = (stack[depth - 1] ?? '') + match[2]!;
    stack.push(url);
    for (const method of match[3]!.split(',').map((m) => m.trim())) routes.push({ method, url });
  }
  return routes;
}

/** The pattern with each `:param` (and a trailing `*`) filled in. */
export function concreteUrl(pattern: string, fill = 'ro-fuzz'): string {
  return pattern.replace(/:[a-z_]+/gu, fill).replace(/\*$/u, 'anything');
}
