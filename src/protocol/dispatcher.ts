/**
 * Routes an admitted request to its method handler after validating params
 * with the method's valibot schema. Handlers answer through a {@link Replier};
 * the dispatcher is where validation problems become wire codes.
 *
 * @module
 */

import * as v from "valibot";
import type { Request } from "./envelope.ts";
import { type ErrorCode, ErrorCode as Codes } from "./errors.ts";
import type { OutputValue } from "./frames.ts";

/** How handlers answer a request. */
export interface Replier {
  /** Sends a success response. */
  result(id: string, result: OutputValue): void;
  /** Sends an error response. */
  error(id: string, code: ErrorCode): void;
}

/** One method: its params schema and its handler. */
export interface MethodHandler<P> {
  /** Validates params; any issue is `invalid_params`. */
  readonly schema: v.GenericSchema<unknown, P>;
  /** Handles validated params; answers now or later through the replier. */
  handle(id: string, params: P): void;
}

/** Builds a {@link MethodHandler}, inferring its params type from the schema. */
export function method<P>(schema: v.GenericSchema<unknown, P>, handle: (id: string, params: P) => void): MethodHandler<P> {
  return { schema, handle };
}

/** Routes requests to a fixed method table. */
export class Dispatcher {
  // deno-lint-ignore no-explicit-any
  readonly #methods: ReadonlyMap<string, MethodHandler<any>>;
  readonly #reply: Replier;

  /** Creates a dispatcher over `methods`. */
  // deno-lint-ignore no-explicit-any
  constructor(methods: ReadonlyMap<string, MethodHandler<any>>, reply: Replier) {
    this.#methods = methods;
    this.#reply = reply;
  }

  /** The method names this dispatcher serves, sorted. */
  get methods(): string[] {
    return [...this.#methods.keys()].sort();
  }

  /** Validates and runs `request`, or answers it with an error. */
  dispatch(request: Request): void {
    const handler = this.#methods.get(request.method);
    if (handler === undefined) return this.#reply.error(request.id, Codes.unsupportedMethod);
    if (request.paramsHaveDuplicate) return this.#reply.error(request.id, Codes.invalidParams);
    const parsed = v.safeParse(handler.schema, request.params);
    if (!parsed.success) return this.#reply.error(request.id, Codes.invalidParams);
    handler.handle(request.id, parsed.output);
  }
}
