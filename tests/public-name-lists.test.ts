/**
 * The name lists the package's entry points export (`magi-code/client`'s
 * `CAPABILITIES`, `magi-code/fuzz`'s method lists) as their users wrote
 * against them before the lists moved into `src/protocol/negotiation.ts`:
 * the same values in the same order (a fuzz suite replaying a recorded
 * fast-check seed picks by index), and types that still take what users pass
 * (a `MethodName`, any `string`). This file compiling is half the proof.
 * The sixteen base methods themselves are pinned, spelled out, by what a
 * base client's `initialize` answers (tests/server.test.ts).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CAPABILITIES, type MethodName } from "../src/client/mod.ts";
import { NEGOTIATED_METHODS, REQUIRED_ONLY_FIELDS, REQUIRED_ONLY_METHODS, WIRE_METHODS } from "../src/fuzz/mod.ts";

/** Whether every client has `method`, asked as a client holding any method name asks it. */
function everyClientHas(method: MethodName): boolean {
  return CAPABILITIES.includes(method);
}

/** Whether `name`, any request name a fuzzer drew, exists only for a client that required it. */
function requiredOnly(name: string): boolean {
  return REQUIRED_ONLY_METHODS.includes(name);
}

/** The params fields of `name` if it is a required-only method. */
function requiredOnlyFields(name: string): readonly string[] | undefined {
  return REQUIRED_ONLY_FIELDS[name]?.map((field) => field.name);
}

describe("the exported name lists", () => {
  it("CAPABILITIES takes any MethodName and holds the sixteen base methods, sorted, not the required-only ones", () => {
    assert.equal(everyClientHas("status"), true);
    assert.equal(everyClientHas("session.rewind"), false);
    assert.equal(everyClientHas("session.rewind.preview"), false);
    assert.deepEqual([...CAPABILITIES], [...WIRE_METHODS].sort());
  });

  it("REQUIRED_ONLY_METHODS and REQUIRED_ONLY_FIELDS answer for any string name", () => {
    assert.equal(requiredOnly("session.rewind"), true);
    assert.equal(requiredOnly("turn.start"), false);
    assert.deepEqual(requiredOnlyFields("session.rewind.preview"), ["session_id", "revision", "message_id"]);
    assert.equal(requiredOnlyFields("turn.start"), undefined);
  });

  it("NEGOTIATED_METHODS are the spec's four negotiated methods in the spec's order, as the kit first exported them", () => {
    // "Require `session.discover`, `model.catalog.status`, `model.refresh` and `operation.cancel`" (the spec's words).
    assert.deepEqual([...NEGOTIATED_METHODS], ["session.discover", "model.catalog.status", "model.refresh", "operation.cancel"]);
  });
});
