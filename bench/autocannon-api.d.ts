// The part of autocannon's programmatic API bench/autocannon-vary.ts uses (the package has no types).
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before each request is sent; returns the request to send. */
    setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  }
  export interface AutocannonOptions {
    url: string;
    connections: number;
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
  }
  /** The same result object as `autocannon -j` prints. */
  export default function autocannon(options: AutocannonOptions): Promise<Record<string, unknown>>;
}
