/**
 * Routes an admitted request to its method handler after validating params
 * with the method's valibot schema. Handlers answer for themselves; the
 * dispatcher answers only what it rejects, and is where validation problems
 * become wire codes.
 *
 * @module
 */

import * as v from "valibot";
import type { Request } from "./envelope.ts";
import { type ErrorCode, ErrorCode as Codes } from "./errors.ts";

/** Sends an error response for a rejected request. */
export type Reject = (id: string, code: ErrorCode) => void;

/** One method: its params schema and its handler. */
export interface MethodHandler<P> {
  /** Validates params; any issue is `invalid_params`. */
  readonly schema: v.GenericSchema<unknown, P>;
  /** Handles validated params; answers now or later. */
  handle(id: string, params: P): void;
}

/** Builds a {@link MethodHandler}, inferring its params type from the schema. */
export function method<P>(schema: v.GenericSchema<unknown, P>, handle: (id: string, params: P) => void): MethodHandler<P> {
  return { schema, handle };
}

/** Routes requests to a fixed method table. */
export class Dispatcher {
  readonly #methods: ReadonlyMap<string, MethodHandler<any>>;
  readonly #reject: Reject;

  /** Creates a dispatcher over `methods` that answers rejections through `reject`. */
  constructor(methods: ReadonlyMap<string, MethodHandler<any>>, reject: Reject) {
    this.#methods = methods;
    this.#reject = reject;
  }

  /** The method names this dispatcher serves, sorted. */
  get methods(): string[] {
    return [...this.#methods.keys()].sort();
  }

  /** Validates and runs `request`, or answers it with an error. */
  dispatch(request: Request): void {
    const handler = this.#methods.get(request.method);
    if (handler === undefined) return this.#reject(request.id, Codes.unsupportedMethod);
    if (request.paramsHaveDuplicate) return this.#reject(request.id, Codes.invalidParams);
    const parsed = v.safeParse(handler.schema, request.params);
    if (!parsed.success) return this.#reject(request.id, Codes.invalidParams);
    handler.handle(request.id, parsed.output);
  }
}
