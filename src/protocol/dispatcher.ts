/**
 * Turns one input frame into at most one handler call: parse it, read its
 * envelope (recording the id in the child's ledger), route the method and
 * validate its params with the method's schema. Handlers answer for
 * themselves; the dispatcher answers only what it rejects, and is where
 * parse, envelope and validation problems become wire codes, in the order
 * `docs/protocol.md` documents.
 *
 * @module
 */

import * as v from "valibot";
import { type Request, readEnvelope } from "./envelope.ts";
import { type ErrorCode, ErrorCode as Codes } from "./errors.ts";
import { parseFrame } from "./json.ts";
import { IdLedger } from "./ledger.ts";
import { LIMITS } from "./limits.ts";
import { isMethodName, type MethodHandlers, type MethodName, METHODS } from "./methods.ts";

/** Sends an error response for a rejected request; `id` is `null` when the request's identity is unrecoverable. */
export type Reject = (id: string | null, code: ErrorCode) => void;

/**
 * A request beyond the base method table (`agent.info`): a client that did
 * not negotiate it meets an unknown method, exactly as before it existed,
 * so its refusal comes before params are looked at.
 */
export interface ExtensionRequest {
  /** Its params schema. */
  readonly params: v.GenericSchema;
  /** Whether the admitted `initialize` required it. */
  readonly negotiated: () => boolean;
  /** Answers a request whose params the schema validated. */
  readonly handle: (id: string, params: unknown) => void;
}

/** A frame of spaces, tabs and CRs only: "empty lines are invalid", before any JSON parsing. */
function isBlank(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

/** Routes the frames of one connection to the method table. */
export class Dispatcher {
  readonly #ledger = new IdLedger(LIMITS.request_ids);
  readonly #handlers: MethodHandlers;
  readonly #reject: Reject;
  readonly #extensions: ReadonlyMap<string, ExtensionRequest>;
  readonly #routed: (method: MethodName) => boolean;

  /**
   * Creates a dispatcher over `handlers` and the `extensions` requests that
   * answers rejections through `reject`; a method `routed` denies is
   * answered as an unknown one.
   */
  constructor(handlers: MethodHandlers, reject: Reject, extensions: ReadonlyMap<string, ExtensionRequest> = new Map(), routed: (method: MethodName) => boolean = () => true) {
    this.#handlers = handlers;
    this.#reject = reject;
    this.#extensions = extensions;
    this.#routed = routed;
  }

  /**
   * Handles one complete frame. Returns `true` when the frame's rejection
   * closes the connection (`protocol_mismatch`, `request_limit`); its error
   * is already queued, so the caller closes after it.
   */
  frame(bytes: Uint8Array): boolean {
    if (isBlank(bytes)) {
      this.#reject(null, Codes.invalidFrame);
      return false;
    }
    const envelope = readEnvelope(parseFrame(bytes, LIMITS.json_depth), this.#ledger);
    if (!envelope.ok) {
      this.#reject(envelope.rejection.id, envelope.rejection.code);
      return envelope.rejection.close;
    }
    this.#dispatch(envelope.request);
    return false;
  }

  #dispatch(request: Request): void {
    const extension = this.#extensions.get(request.method);
    if (extension !== undefined && extension.negotiated()) return this.#extension(extension, request);
    if (!isMethodName(request.method) || !this.#routed(request.method)) return this.#reject(request.id, Codes.unsupportedMethod);
    if (request.paramsHaveDuplicate) return this.#reject(request.id, Codes.invalidParams);
    if (!this.#run(request.method, request.id, request.params)) this.#reject(request.id, Codes.invalidParams);
  }

  #extension(extension: ExtensionRequest, request: Request): void {
    const parsed = request.paramsHaveDuplicate ? null : v.safeParse(extension.params, request.params);
    if (parsed === null || !parsed.success) return this.#reject(request.id, Codes.invalidParams);
    extension.handle(request.id, parsed.output);
  }

  /** Validates `params` against method `name`'s schema and runs its handler; `false` when they are invalid. */
  #run<M extends MethodName>(name: M, id: string, params: unknown): boolean {
    const parsed = v.safeParse(METHODS[name], params);
    if (!parsed.success) return false;
    this.#handlers[name](id, parsed.output);
    return true;
  }
}
