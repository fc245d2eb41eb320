/**
 * fast-check arbitraries for fuzzing a magi-code child (or any implementation
 * of magi-code.local-agent version 1): valid request frames, invalid frames
 * labelled with the error code the spec demands, and arbitrary chunkings of a
 * byte stream (this file); valid and invalid params for each of the sixteen
 * methods and the admission order that decides a request's code (the files
 * re-exported below). Published as the `magi-code/fuzz` subpath; `fast-check`
 * is a peer dependency. See `docs/fuzzing.md`.
 *
 * @module
 */

import fc from "fast-check";
import { ErrorCode } from "../protocol/errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
import { LIMITS } from "../protocol/limits.ts";
import { frameText } from "./report.ts";
import { identifier } from "./text.ts";

export { type AnswerFrame, expectAnswer, type ExpectedAnswer, frameText } from "./report.ts";
export { hasNonSpace, identifier, INVISIBLE_NON_SPACE, type Prompt, prompt, WHITE_SPACE } from "./text.ts";
export { admissionCode, type ChildPhase, clientToolResultCode, type NegotiationCall, negotiationCall } from "./admission.ts";
export { type Defect, effortDefects } from "./defects.ts";
export {
  CLIENT_TOOL_BOUNDS,
  type ClientTool,
  clientTool,
  clientToolName,
  clientToolRegistry,
  clientToolResultParams,
  invalidClientToolRegistry,
  invalidClientToolResultParams,
  type InvalidRegistry,
} from "./client-tools.ts";
export { capabilityList, effortRequest, type FieldKind, type FieldSpec, isPaged, PARAMS_FIELDS, REQUIRED_ONLY_FIELDS, selectionName, SET_EFFORT_VALUES, sessionId } from "./fields.ts";
export { invalidCall, type InvalidParams, invalidParams, paramsFrameBytes } from "./invalid-params.ts";
export {
  EXTENSION_CAPABILITIES,
  EXTENSION_METHODS,
  type ExtensionMethod,
  isExtensionMethod,
  isGated,
  type KitMethod,
  NEGOTIATED_METHODS,
  REQUEST_NAMES,
  type RequestName,
  REQUIRED_ONLY_METHODS,
  type WireMethod,
  WIRE_METHODS,
} from "./methods.ts";
export { fieldValue, type ParamsContext, validCall, validParams } from "./params.ts";

const encoder = new TextEncoder();

/** A request object (not yet serialised). */
export interface RequestObject {
  readonly protocol: string;
  readonly version: number;
  readonly id: string;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/** Builds a request object. */
export function request(id: string, method: string, params: Record<string, unknown> = {}): RequestObject {
  return { protocol: PROTOCOL, version: PROTOCOL_VERSION, id, method, params };
}

/** Serialises `value` as one frame: JSON plus LF, UTF-8 encoded. */
export function frameBytes(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value)}\n`);
}

/**
 * A valid request that never closes the connection: `status`, or `initialize`
 * with a valid capability list (`shutdown` is left out because it ends input).
 */
export function validRequest(id: fc.Arbitrary<string> = identifier()): fc.Arbitrary<RequestObject> {
  const capabilities = fc.uniqueArray(fc.constantFrom("initialize", "status", "shutdown"), { maxLength: 3 });
  return fc.oneof(
    id.map((value) => request(value, "status")),
    fc.tuple(id, capabilities).map(([value, names]) => request(value, "initialize", { required_capabilities: names })),
  );
}

/**
 * A stream of valid request frames with distinct ids, as bytes; optionally
 * with CR before each LF, which the spec counts as JSON whitespace.
 */
export function validStream(maxRequests = 20): fc.Arbitrary<Uint8Array> {
  return fc.tuple(
    fc.uniqueArray(identifier(), { minLength: 1, maxLength: maxRequests }),
    fc.boolean(),
  ).chain(([ids, crlf]) =>
    fc.tuple(...ids.map((id) => validRequest(fc.constant(id)))).map((requests) => {
      const lines = requests.map((value) => `${JSON.stringify(value)}${crlf ? "\r" : ""}\n`);
      return encoder.encode(lines.join(""));
    })
  );
}

/** An invalid frame (without its LF) and the response it must receive. */
export interface InvalidFrame {
  /** The frame bytes, LF excluded. */
  readonly bytes: Uint8Array;
  /** The code the response must carry. */
  readonly code: ErrorCode;
  /**
   * The `id` the response must carry: the request id when identity is
   * recoverable (the id is then also recorded in the child's ledger), else `null`.
   */
  readonly id: string | null;
  /** What kind of defect it is, for reports. */
  readonly label: string;
  /** The frame as text (see {@link frameText}): what fast-check prints for a counterexample, not a byte array. */
  readonly text: string;
}

/** Builds an {@link InvalidFrame} that fast-check prints as its label, code, id and text. */
function labelled(label: string, code: ErrorCode, id: string | null, bytes: Uint8Array): InvalidFrame {
  const text = frameText(bytes);
  return {
    label,
    code,
    id,
    bytes,
    text,
    [fc.toStringMethod]: () => `InvalidFrame(${JSON.stringify(label)} → ${code}, id ${JSON.stringify(id)}: ${text})`,
  } as InvalidFrame;
}

function nested(id: string, depth: number): string {
  return `{"protocol":"${PROTOCOL}","version":1,"id":"${id}","method":"status","params":{"x":${"[".repeat(depth)}${
    "]".repeat(depth)
  }}}`;
}

/** A valid `status` request for `id` whose params string carries `bytes` raw (so it is invalid UTF-8). */
function withRawBytes(id: string, bytes: readonly number[], prefix: readonly number[] = []): Uint8Array {
  const head = encoder.encode(`{"protocol":"${PROTOCOL}","version":1,"id":"${id}","method":"status","params":{"x":"`);
  const tail = encoder.encode(`"}}`);
  return Uint8Array.from([...prefix, ...head, ...bytes, ...tail]);
}

/**
 * Invalid frames, each labelled with the response the spec (and
 * `docs/protocol.md`) assigns. None of them closes the connection. Frames
 * whose identity is recoverable carry `id`, so a caller that passes distinct
 * ids gets distinct ledger entries (reusing an id would rightly yield
 * `duplicate_id`); the others are answered with `id: null` and record nothing.
 */
export function invalidFrameFor(id: string): fc.Arbitrary<InvalidFrame> {
  const valid = `"protocol":"${PROTOCOL}","version":1`;
  const none = (label: string, code: ErrorCode, bytes: Uint8Array | string): InvalidFrame =>
    labelled(label, code, null, typeof bytes === "string" ? encoder.encode(bytes) : bytes);
  const own = (label: string, code: ErrorCode, text: string): InvalidFrame => labelled(label, code, id, encoder.encode(text));
  return fc.constantFrom(
    none("empty line", ErrorCode.invalidFrame, ""),
    none("CR only", ErrorCode.invalidFrame, "\r"),
    none("whitespace only", ErrorCode.invalidFrame, " \t \r"),
    none("not JSON", ErrorCode.invalidRequest, "hello"),
    none("JSON array", ErrorCode.invalidRequest, "[1,2]"),
    none("JSON string", ErrorCode.invalidRequest, '"status"'),
    none("trailing comma", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"status","params":{},}`),
    none("BOM", ErrorCode.invalidRequest, withRawBytes(id, [0x61], [0xef, 0xbb, 0xbf])),
    none("overlong slash", ErrorCode.invalidRequest, withRawBytes(id, [0xc0, 0xaf])),
    none("encoded surrogate", ErrorCode.invalidRequest, withRawBytes(id, [0xed, 0xa0, 0x80])),
    none("lone continuation", ErrorCode.invalidRequest, withRawBytes(id, [0x80])),
    none("truncated sequence", ErrorCode.invalidRequest, withRawBytes(id, [0xe2, 0x82])),
    none("missing id", ErrorCode.invalidRequest, `{${valid},"method":"status","params":{}}`),
    none("numeric id", ErrorCode.invalidRequest, `{${valid},"id":7,"method":"status","params":{}}`),
    none("id too long", ErrorCode.invalidRequest, `{${valid},"id":"${"a".repeat(65)}","method":"status","params":{}}`),
    none("id bad char", ErrorCode.invalidRequest, `{${valid},"id":"a b","method":"status","params":{}}`),
    none("duplicate id key", ErrorCode.invalidRequest, `{${valid},"id":"${id}","\\u0069d":"${id}","method":"status","params":{}}`),
    none("depth 33", ErrorCode.invalidFrame, nested(id, 31)),
    none("depth 32,000 within the frame bound", ErrorCode.invalidFrame, nested(id, 32_000)),
    own("unknown envelope field", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"status","params":{},"x":1}`),
    own("__proto__ envelope field", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"status","params":{},"__proto__":{}}`),
    own("missing params", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"status"}`),
    own("bad method grammar", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"st atus","params":{}}`),
    own("duplicate method key", ErrorCode.invalidRequest, `{${valid},"id":"${id}","method":"status","method":"status","params":{}}`),
    own("unknown method", ErrorCode.unsupportedMethod, `{${valid},"id":"${id}","method":"session.frobnicate","params":{}}`),
    own("unknown params field", ErrorCode.invalidParams, `{${valid},"id":"${id}","method":"status","params":{"x":1}}`),
    own("__proto__ params field", ErrorCode.invalidParams, `{${valid},"id":"${id}","method":"status","params":{"__proto__":1}}`),
    own("params not object", ErrorCode.invalidParams, `{${valid},"id":"${id}","method":"status","params":[]}`),
    own(
      "duplicate params key",
      ErrorCode.invalidParams,
      `{${valid},"id":"${id}","method":"initialize","params":{"required_capabilities":[],"required_capabilities":[]}}`,
    ),
    own("depth 32", ErrorCode.invalidParams, nested(id, 30)),
  );
}

/** {@link invalidFrameFor} with an arbitrary id. */
export function invalidFrame(): fc.Arbitrary<InvalidFrame> {
  return identifier().chain(invalidFrameFor);
}

/**
 * Splits `bytes` at arbitrary offsets (cuts inside UTF-8 sequences and between
 * CR and LF included), yielding chunks whose concatenation is `bytes`.
 */
export function chunking(bytes: Uint8Array, maxCuts = 32): fc.Arbitrary<Uint8Array[]> {
  if (bytes.length < 2) return fc.constant([bytes]);
  return fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: maxCuts })
    .map((cuts) => splitAt(bytes, cuts));
}

/** Splits `bytes` at the given offsets (any order, duplicates ignored) into chunks that concatenate to `bytes`. */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const sorted = [...new Set(cuts)].filter((cut) => cut > 0 && cut < bytes.length).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of [...sorted, bytes.length]) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  return chunks;
}

/** Frame lengths at and around the input bound: 65,535 to 65,538 bytes. */
export function boundaryFrameLength(): fc.Arbitrary<number> {
  const limit = LIMITS.input_frame_bytes;
  return fc.constantFrom(limit - 1, limit, limit + 1, limit + 2);
}
