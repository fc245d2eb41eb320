/**
 * The fuzz kit's required-only methods (`session.rewind.preview`,
 * `session.rewind`) against the server: the kit spells the same params as
 * the server's schemas, and a child whose client did not require them answers any call of
 * one, whatever its params and phase, exactly as a name that is no method.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { REQUIRED_ONLY_FIELDS, REQUIRED_ONLY_METHODS } from "../src/fuzz/mod.ts";
import { ErrorCode } from "../src/protocol/errors.ts";
import { METHODS } from "../src/protocol/methods.ts";
import { REQUIRED_ONLY_METHODS as PROTOCOL_REQUIRED_ONLY } from "../src/protocol/negotiation.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { startServer } from "./support/harness.ts";
import { callRaw } from "./support/params-child.ts";

describe("the fuzz kit's required-only methods", () => {
  it("REQUIRED_ONLY_FIELDS are the fields of the server's params schema of each required-only method", () => {
    for (const method of PROTOCOL_REQUIRED_ONLY) {
      const entries = Object.keys((METHODS[method] as unknown as { pipe: [unknown, { entries: object }] }).pipe[1].entries);
      assert.deepEqual(REQUIRED_ONLY_FIELDS[method].map((field) => field.name), entries, method);
    }
  });

  it("a child whose client did not require them answers every call of one unsupported_method, before and after initialize, whatever the params", async () => {
    const run = startServer({ env: { HOME: "/home/user", MC_HOME: "/home/user/.magi-code" } });
    const params = fc.oneof(fc.json(), fc.dictionary(fc.constantFrom("session_id", "revision", "message_id", "restore_files", "x"), fc.jsonValue()).map((value) => JSON.stringify(value)));
    const call = fc.tuple(fc.constantFrom(...REQUIRED_ONLY_METHODS), params);
    const check = async (method: string, json: string) => {
      const frame = await callRaw(run, method, json);
      assert.equal(frame.error?.code, ErrorCode.unsupportedMethod, `${method} ${json}`);
    };
    await fc.assert(fc.asyncProperty(call, ([method, json]) => check(method, json)), { numRuns: fuzzRuns(50) });
    await callRaw(run, "initialize", JSON.stringify({ required_capabilities: ["session.create"] }));
    await fc.assert(fc.asyncProperty(call, ([method, json]) => check(method, json)), { numRuns: fuzzRuns(50) });
    run.runtime.input.end();
    assert.equal(await run.exit, 0);
  });
});
