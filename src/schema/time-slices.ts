// Long answers are built in slices of the event loop (decisions.md "Bounded work": `/health` answers
// within 1 s while the most expensive allowed query runs). Once its rows have arrived, graphql-js
// completes a whole result in one macrotask: the costliest allowed answer (about 50,000 objects) held the
// loop for ~400 ms on an idle machine and over 1 s on a loaded one, and every other request of every
// organisation on the process waited. So each list field first asks whether the current slice has run
// past SLICE_MS; if it has, the field waits for its turn in a later event-loop iteration. Waiters are let
// go one per iteration, in arrival order, so I/O (other requests, /health) is served between slices and
// two large answers take turns.
import { defaultFieldResolver, getNullableType, isListType, type GraphQLFieldConfig, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';

const SLICE_MS = 10;

let sliceStart = 0;
/** Whether a slice is under way: set by the first check of a macrotask, cleared in the next iteration. */
let inSlice = false;
const waiting: (() => void)[] = [];

function endSlice() {
  inSlice = false;
}

function startSlice() {
  inSlice = true;
  sliceStart = performance.now();
  setImmediate(endSlice);
}

/** Whether the work under way has had its slice: true means call `nextSlice()` before doing more. */
export function sliceSpent(): boolean {
  if (!inSlice) {
    startSlice();
    return false;
  }
  return performance.now() - sliceStart > SLICE_MS;
}

function releaseOne() {
  const next = waiting.shift();
  if (waiting.length) setImmediate(releaseOne);
  if (!next) return;
  startSlice();
  next();
}

/** Resolves in a later event-loop iteration, with a fresh slice, after the work that asked before. */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    if (waiting.push(resolve) === 1) setImmediate(releaseOne);
  });
}

/** Waits for the next slice only when this one is spent (most calls return at once, without a promise). */
export function yieldIfSpent(): Promise<void> | undefined {
  return sliceSpent() ? nextSlice() : undefined;
}

/** The schema with every list field taking its turn (see above) before it resolves. */
export function sliceListFields(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (config: GraphQLFieldConfig<unknown, unknown>) => {
      if (!isListType(getNullableType(config.type))) return config;
      const resolve = config.resolve ?? defaultFieldResolver;
      return {
        ...config,
        resolve: (source, args, ctx, info) => {
          const turn = yieldIfSpent();
          return turn ? turn.then(() => resolve(source, args, ctx, info)) : resolve(source, args, ctx, info);
        },
      };
    },
  });
}
