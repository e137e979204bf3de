import type { Method, Route } from './routes.js';

interface Compiled {
  route: Route;
  pattern: RegExp;
  names: string[];
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allow: Method[] };

/** Matches a method and path against the route table; tells 404 from 405 so that clients see which. */
export class Router {
  private readonly compiled: Compiled[];

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const source = route.path.replace(/\{([a-zA-Z]+)\}/g, (_m, n: string) => {
        names.push(n);
        return '([^/]+)';
      });
      return { route, pattern: new RegExp(`^${source}$`), names };
    });
  }

  match(method: string, path: string): Match {
    const allow: Method[] = [];
    for (const c of this.compiled) {
      const m = c.pattern.exec(path);
      if (!m) continue;
      if (c.route.method !== method) {
        allow.push(c.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      c.names.forEach((n, i) => (params[n] = m[i + 1] ?? ''));
      return { kind: 'found', route: c.route, params };
    }
    return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
  }
}
