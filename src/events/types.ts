// The event types: each domain declares those it emits in its manifest (`events`), with what the webhook
// documentation says of them, and they are registered once from the list of domains (domains/index.ts).
// This folder holds the mechanism, no domain's list.

/**
 * The types `emit` takes: each domain adds its own by declaration merging, from its list
 * (`declare module '…/events/types.js' { interface EmittedEventTypes extends Record<…, true> {} }`),
 * so a misspelt type fails the typecheck; `emit` also refuses an unregistered one at run time.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the domains' declarations
export interface EmittedEventTypes {}

export type EventType = Extract<keyof EmittedEventTypes, string>;

export interface EventTypeSpec<T extends string = string> {
  type: T;
  description: string;
  /** The REST read whose answer `data` is: a root field, and the key path to the resource inside its answer. */
  read?: { field: `Query.${string}`; path?: readonly string[] };
  /** Keys `data` has besides (or, without `read`, instead of) the resource: JSON Schemas by key. */
  extra?: Record<string, Record<string, unknown>>;
  /**
   * Listed (in answers and the OpenAPI document) right after this type of a domain before, instead of
   * after every type registered so far; the types after it in its domain's list follow it.
   */
  listedAfter?: string;
}

/** A domain's list, its literal types kept for its `EmittedEventTypes` declaration. */
export function defineEventTypes<const T extends string>(specs: readonly EventTypeSpec<T>[]): readonly EventTypeSpec<T>[] {
  return specs;
}

const registered: EventTypeSpec[] = [];
const known = new Set<string>();

/** Called once per domain, in the order of the domains list (domains/index.ts). */
export function registerEventTypes(specs: readonly EventTypeSpec[]): void {
  let at = registered.length;
  for (const spec of specs) {
    if (known.has(spec.type)) throw new Error(`Event type ${spec.type} is declared twice`);
    if (spec.listedAfter) {
      at = registered.findIndex((s) => s.type === spec.listedAfter) + 1;
      if (at === 0) throw new Error(`Event type ${spec.type} is listed after ${spec.listedAfter}, which no domain before it declares`);
    }
    registered.splice(at++, 0, spec);
    known.add(spec.type);
  }
}

/** Every type, in listing order, once the domains have registered them: an entry point that forgot is a programming error. */
export function eventTypeSpecs(): readonly EventTypeSpec[] {
  if (!registered.length) throw new Error('No event types registered: import src/domains/index.js in this entry point');
  return registered;
}

export function isEventType(type: string): boolean {
  eventTypeSpecs();
  return known.has(type);
}
