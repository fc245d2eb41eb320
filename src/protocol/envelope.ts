/**
 * Reads the request envelope of one parsed frame: protocol identity, request
 * identity (recorded in the ledger as soon as it is recoverable) and the exact
 * set of top-level fields. Method routing and params validation happen later,
 * in the dispatcher.
 *
 * @module
 */

import { ErrorCode } from "./errors.ts";
import { isIdentifier, PROTOCOL, PROTOCOL_VERSION } from "./identity.ts";
import type { IdLedger } from "./ledger.ts";
import type { JsonObject, JsonValue, ParseResult } from "./json-value.ts";

/** A request whose envelope is valid and whose id was admitted to the ledger. */
export interface Request {
  /** The request id, unique for the life of the child. */
  readonly id: string;
  /** The method name (grammar-checked, not yet routed). */
  readonly method: string;
  /** Not yet validated: the method's own schema checks it, answering `invalid_params`. */
  readonly params: JsonValue;
  /** Whether a duplicate key was found inside `params`. */
  readonly paramsHaveDuplicate: boolean;
}

/** An envelope rejection; `close` means the connection must close after answering. */
export interface EnvelopeRejection {
  readonly code: ErrorCode;
  /** The request id when recoverable, else `null`. */
  readonly id: string | null;
  /** Whether the connection closes after this response. */
  readonly close: boolean;
}

/** The outcome of {@link readEnvelope}. */
export type EnvelopeResult =
  | { readonly ok: true; readonly request: Request }
  | { readonly ok: false; readonly rejection: EnvelopeRejection };

const ENVELOPE_FIELDS = new Set(["protocol", "version", "id", "method", "params"]);

function reject(code: ErrorCode, id: string | null, close = false): EnvelopeResult {
  return { ok: false, rejection: { code, id, close } };
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validates the envelope of `parsed` and records its id in `ledger`.
 *
 * Order matters and is documented in `docs/protocol.md`: parse failures and
 * non-objects have no identity; a foreign protocol or version closes the
 * connection; a missing, malformed or duplicated `id` is unrecoverable; a
 * recoverable id is recorded before any further check, so every rejected
 * well-formed request still consumes its id.
 */
export function readEnvelope(parsed: ParseResult, ledger: IdLedger): EnvelopeResult {
  if (!parsed.ok) return reject(parsed.code, null);
  const frame = parsed.value;
  if (!isObject(frame)) return reject(ErrorCode.invalidRequest, null);
  const id = !parsed.rootDuplicates.includes("id") && isIdentifier(frame.id) ? frame.id : null;

  const foreignProtocol = Object.hasOwn(frame, "protocol") && frame.protocol !== PROTOCOL;
  const foreignVersion = Object.hasOwn(frame, "version") && frame.version !== PROTOCOL_VERSION;
  if (foreignProtocol || foreignVersion) return reject(ErrorCode.protocolMismatch, id, true);
  if (id === null) return reject(ErrorCode.invalidRequest, null);

  switch (ledger.record(id)) {
    case "duplicate":
      return reject(ErrorCode.duplicateId, id);
    case "limit":
      return reject(ErrorCode.requestLimit, id, true);
    case "admitted":
      break;
  }

  if (parsed.rootDuplicates.length > 0) return reject(ErrorCode.invalidRequest, id);
  let fields = 0;
  for (const key in frame) {
    if (!ENVELOPE_FIELDS.has(key)) return reject(ErrorCode.invalidRequest, id);
    fields++;
  }
  if (fields !== ENVELOPE_FIELDS.size) return reject(ErrorCode.invalidRequest, id);
  if (!isIdentifier(frame.method)) return reject(ErrorCode.invalidRequest, id);

  const paramsHaveDuplicate = parsed.duplicate !== null && parsed.duplicate.path[0] === "params";
  return {
    ok: true,
    request: { id, method: frame.method, params: frame.params as JsonValue, paramsHaveDuplicate },
  };
}
