/**
 * Which code a request must get before its operation runs, given whether
 * its params are valid, where the child's lifecycle stands and what the
 * admitted `initialize` negotiated. The order is the spec's and
 * `docs/features/local-agent-extensions.md`'s: `invalid_params` first (even
 * for a method that was not negotiated, even before `initialize`), then the
 * phase (`not_initialized`, a failed startup's own code), then negotiation
 * (`unsupported_capability`), then the operation itself.
 *
 * @module
 */

import fc from "fast-check";
import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import { capabilityList, PARAMS_FIELDS } from "./fields.ts";
import { type InvalidParams, invalidParams } from "./invalid-params.ts";
import { requiredCapability } from "../protocol/negotiation.ts";
import { EXTENSION_CAPABILITIES, EXTENSION_METHODS, isGated, type KitMethod, NEGOTIATED_METHODS, type RequestName, WIRE_METHODS } from "./methods.ts";
import { type ParamsContext, validParams } from "./params.ts";
import { clientToolRegistry } from "./client-tools.ts";

/**
 * Where a child stands: no `initialize` admitted yet, startup pending,
 * ready with the admitted `required_capabilities`, or failed with its
 * startup error code. A pending or failed startup's `required` (absent:
 * none) matters only to a required-only request (a rewind method, an
 * extension request): one whose capability the admitted `initialize`
 * required exists, and meets the phase gate like any method.
 */
export type ChildPhase =
  | { readonly kind: "new" }
  | { readonly kind: "starting"; readonly required?: readonly string[] }
  | { readonly kind: "ready"; readonly required: readonly string[] }
  | { readonly kind: "failed"; readonly code: ErrorCode; readonly required?: readonly string[] };

/**
 * The code the spec requires for a `method` request whose params are
 * `paramsValid` or not, in `phase`; null when admission lets it through and
 * the operation answers (with its result or one of its own codes, never
 * `invalid_params`, a phase code or `unsupported_capability`). A
 * required-only request (`session.rewind`, `session.rewind.preview`,
 * `agent.info`, `client.tool.result`) whose capability the admitted
 * `initialize` did not require (none before one) is an unknown method,
 * whatever its params, as it was before it existed; which capability each
 * needs is the protocol's own table (`requiredCapability`).
 */
export function admissionCode(method: RequestName, paramsValid: boolean, phase: ChildPhase): ErrorCode | null {
  const required: readonly string[] = phase.kind === "new" ? [] : phase.required ?? [];
  const capability = requiredCapability(method);
  if (capability !== undefined && !required.includes(capability)) return ErrorCode.unsupportedMethod;
  if (!paramsValid) return ErrorCode.invalidParams;
  if (method === "shutdown") return null;
  if (method === "initialize") return phase.kind === "new" ? null : ErrorCode.alreadyInitialized;
  if (method === "status") return phase.kind === "new" ? ErrorCode.notInitialized : null;
  if (!isGated(method)) return null;
  switch (phase.kind) {
    case "new":
    case "starting":
      return ErrorCode.notInitialized;
    case "failed":
      return phase.code;
    case "ready":
      return (NEGOTIATED_METHODS as readonly string[]).includes(method) && !phase.required.includes(method) ? ErrorCode.unsupportedCapability : null;
  }
}

/** A request to send to a child that admitted `required`, and the codes it must get there and before `initialize`. */
export interface NegotiationCall {
  /** The `required_capabilities` of the child's `initialize`. */
  readonly required: readonly string[];
  /** The params of that `initialize`: `required`, with a `client_tools` registry when it lists `client.tools`. */
  readonly initialize: Readonly<Record<string, unknown>>;
  readonly method: KitMethod;
  /** The params as JSON text (send it with `paramsFrameBytes`). */
  readonly json: string;
  /** Whether the params are valid; when not, `label` says why. */
  readonly valid: boolean;
  readonly label: string;
  /** {@link admissionCode} on the ready child: the exact code, or null for "the operation answers". */
  readonly code: ErrorCode | null;
  /** {@link admissionCode} for the same request before any `initialize`. */
  readonly before: ErrorCode | null;
}

/**
 * A negotiation scenario: a capability list (the negotiated four in or out,
 * the empty and the full list favoured, extension capabilities in or out:
 * they change no method's admission, only which params fields are valid) and a call of any method but
 * `initialize` and `shutdown`, negotiated ones more often, with valid or invalid params,
 * paired with the code the child must answer once ready and before
 * `initialize`.
 */
export function negotiationCall(context: ParamsContext = {}): fc.Arbitrary<NegotiationCall> {
  // initialize would change the phase it is checked in, and shutdown ends input.
  const callable = WIRE_METHODS.filter((method) => method !== "initialize" && method !== "shutdown");
  const method = fc.oneof(fc.constantFrom<KitMethod>(...NEGOTIATED_METHODS, ...EXTENSION_METHODS), fc.constantFrom<KitMethod>(...callable));
  const withExtensions = fc.tuple(capabilityList(WIRE_METHODS), fc.subarray([...EXTENSION_CAPABILITIES]), clientToolRegistry(2))
    .map(([methods, extensions, tools]) => {
      const required = [...methods.slice(0, LIMITS.required_capabilities - extensions.length), ...extensions];
      // `client.tools` is required together with its registry, or not at all.
      return { required, initialize: extensions.includes("client.tools") ? { required_capabilities: required, client_tools: tools } : { required_capabilities: required } };
    });
  return fc.tuple(withExtensions, method, fc.boolean()).chain(([{ required, initialize }, name, valid]) => {
    // Before `initialize` nothing is negotiated: an extension's field is an unknown one there.
    const extensionFields = PARAMS_FIELDS[name].filter((spec) => spec.extension !== undefined).map((spec) => spec.name);
    const params: fc.Arbitrary<{ json: string; label: string; validBefore: boolean }> = valid
      ? validParams(name, context, required).map((value) => ({ json: JSON.stringify(value), label: "valid params", validBefore: !extensionFields.some((field) => field in value) }))
      : invalidParams(name, context, required).map((bad: InvalidParams) => ({ json: bad.json, label: bad.label, validBefore: false }));
    return params.map(({ json, label, validBefore }): NegotiationCall => ({
      required,
      initialize,
      method: name,
      json,
      valid,
      label,
      code: admissionCode(name, valid, { kind: "ready", required }),
      before: admissionCode(name, validBefore, { kind: "new" }),
    }));
  });
}

/**
 * The code a `client.tool.result` must get before it reaches the calls, or
 * null when it does (then `{ "accepted": true }` or `stale_tool_call`):
 * {@link admissionCode} of `client.tool.result` in `phase`, with
 * `negotiated` saying whether its `initialize` required `client.tools` (so
 * a child that did not, or before any `initialize`, knows no such method);
 * then params, then the phase.
 */
export function clientToolResultCode(paramsValid: boolean, phase: ChildPhase, negotiated: boolean): ErrorCode | null {
  return admissionCode("client.tool.result", paramsValid, phase.kind === "new" ? phase : { ...phase, required: negotiated ? ["client.tools"] : [] });
}
