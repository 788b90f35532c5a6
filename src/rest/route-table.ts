// The REST route table, derived from the domains' manifests: each route with its domain, a compiled
// matcher, and the response style of each area (the first path segment) for answers given before a
// route is known (unknown paths, 401 before matching, 413 on the socket).
import type { DomainManifest, RouteSpec } from '../domains/manifest.js';
import type { ResponseStyle } from '../http/responses.js';

export const BASE_PATH = '/backend';

export interface CompiledRoute {
  route: RouteSpec;
  domain: string;
  /** The full request path pattern (with /backend unless the route is absolute). */
  fullPath: string;
  pattern: RegExp;
  paramNames: string[];
  /** Literal segments count more than params, so /pipelines/reorder wins over /pipelines/:id. */
  specificity: number;
}

export interface RouteTable {
  routes: CompiledRoute[];
  /**
   * The route for a method and path (trailing slash ignored), with its params; `allowed`: the methods
   * the path answers (empty for an unknown path), for a 405's `Allow`.
   */
  match(method: string, pathname: string): { compiled?: CompiledRoute; params: Record<string, string>; allowed: string[] };
  /** The style of a full request path, whether or not a route matches it. */
  styleOf(pathname: string): ResponseStyle;
}

function compile(route: RouteSpec, domain: string): CompiledRoute {
  const fullPath = route.absolute ? route.path : BASE_PATH + route.path;
  const segments = fullPath.split('/').filter(Boolean);
  const paramNames: string[] = [];
  const source = segments
    .map((s) => {
      if (s === '*') {
        paramNames.push('path');
        return '/(.+)';
      }
      if (s.startsWith(':')) {
        paramNames.push(s.slice(1));
        return '/([^/]+)';
      }
      return '/' + s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return {
    route,
    domain,
    fullPath,
    pattern: new RegExp(`^${source}/?$`),
    paramNames,
    specificity: segments.filter((s) => !s.startsWith(':') && s !== '*').length,
  };
}

const areaOf = (pathname: string) => {
  const segments = pathname.split('/').filter(Boolean);
  return segments[0] === BASE_PATH.slice(1) ? `${BASE_PATH}/${segments[1] ?? ''}` : `/${segments[0] ?? ''}`;
};

export function buildRouteTable(domains: readonly DomainManifest[]): RouteTable {
  const routes = domains.flatMap((d) => d.routes.map((r) => compile(r, d.name))).sort((a, b) => b.specificity - a.specificity);

  // One style per area; a domain that mixes styles within an area is a mistake caught at start.
  const areaStyles = new Map<string, ResponseStyle>();
  for (const c of routes) {
    const area = areaOf(c.fullPath);
    const seen = areaStyles.get(area);
    if (seen && seen !== c.route.style)
      throw new Error(`Routes under ${area} mix bare and envelope styles (${c.route.method} ${c.fullPath})`);
    areaStyles.set(area, c.route.style);
  }
  const seen = new Set<string>();
  for (const c of routes) {
    const key = `${c.route.method} ${c.fullPath.replace(/:[^/]+/g, ':')}`;
    if (seen.has(key)) throw new Error(`Route ${key} is declared twice`);
    seen.add(key);
  }

  return {
    routes,
    match(method, pathname) {
      const candidates = routes.filter((c) => c.pattern.test(pathname));
      const wanted = method === 'HEAD' ? ['HEAD', 'GET'] : [method];
      const compiled = wanted.map((m) => candidates.find((c) => c.route.method === m)).find(Boolean);
      const params: Record<string, string> = {};
      if (compiled) {
        const values = compiled.pattern.exec(pathname)!.slice(1);
        compiled.paramNames.forEach((name, i) => (params[name] = values[i]));
      }
      const methods = new Set(candidates.map((c) => c.route.method));
      if (methods.has('GET')) methods.add('HEAD');
      return { compiled, params, allowed: [...methods] };
    },
    // Unknown areas answer in the envelope style, like 401s.
    styleOf: (pathname) => areaStyles.get(areaOf(pathname)) ?? (pathname.startsWith(BASE_PATH + '/') ? 'bare' : 'envelope'),
  };
}
