/**
 * The methods only a client that required them has (`agent.info`,
 * `session.rewind.preview`, `session.rewind`), in every phase of a child:
 * for a client that did not require them each answer is, byte for byte but
 * its id, the answer to a name that is no method, whatever the params; for
 * one that did, the base admission order holds (params, then the phase).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { admissionCode, paramsFrameBytes } from "../src/fuzz/mod.ts";
import { HOME } from "./support/catalog.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { type Frame, type Run, startServer } from "./support/harness.ts";
import { callRaw } from "./support/params-child.ts";

const REQUIRED_ONLY = ["agent.info", "session.rewind.preview", "session.rewind"] as const;
const decoder = new TextDecoder();

/** `frame` as its bytes would be with id and sequence number blanked: what must not differ from an unknown method's. */
const shape = (frame: Frame): string => JSON.stringify({ ...frame, id: null, seq: 0 });

/** Params of any JSON, or objects over the methods' own field names. */
const anyParams = fc.oneof(
  fc.json(),
  fc.dictionary(fc.constantFrom("session_id", "revision", "message_id", "restore_files", "x"), fc.jsonValue()).map((value) => JSON.stringify(value)),
);

/** Asserts that every required-only call answers as `unknown.method` does, for any params. */
async function answersAsUnknown(run: Run): Promise<void> {
  const unknown = shape(await callRaw(run, "no.such.method", "{}"));
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...REQUIRED_ONLY), anyParams, async (method, json) => {
      assert.equal(shape(await callRaw(run, method, json)), unknown, `${method} ${json}`);
    }),
    { numRuns: fuzzRuns(30, 10) },
  );
}

/** A child whose settings do not parse, so its startup fails. */
function failing(): Run {
  const fs = new MemoryFileSystem();
  fs.writeFile(`${HOME}/settings.jsonc`, "{ not settings", 0o600);
  return startServer({ fs, env: { HOME: "/home/user", MC_HOME: HOME } });
}

describe("required-only methods in every phase", () => {
  it("a base client's agent.info, session.rewind.preview and session.rewind answers equal an unknown method's before initialize and after a failed startup", async () => {
    const before = startServer({ env: { HOME: "/home/user", MC_HOME: HOME } });
    await answersAsUnknown(before);
    before.runtime.input.end();
    assert.equal(await before.exit, 0);

    const failed = failing();
    assert.equal((await callRaw(failed, "initialize", JSON.stringify({ required_capabilities: [] }))).error?.code, "configuration_invalid");
    await answersAsUnknown(failed);
    failed.runtime.input.end();
    await failed.exit;
  });

  it("a base client's calls while startup is pending answer as an unknown method's", async () => {
    for (const method of REQUIRED_ONLY) {
      const run = startServer({ env: { HOME: "/home/user", MC_HOME: HOME } });
      // One read batch: both calls are dispatched while the startup task has not finished.
      const init = decoder.decode(paramsFrameBytes("i", "initialize", JSON.stringify({ required_capabilities: ["status"] })));
      run.runtime.input.push(init + decoder.decode(paramsFrameBytes("u", "no.such.method", "{}")) + decoder.decode(paramsFrameBytes("c", method, "{}")));
      const frames = await run.waitFrames(3);
      assert.equal(shape(frames.find((frame) => frame.id === "c")!), shape(frames.find((frame) => frame.id === "u")!), method);
      run.runtime.input.end();
      await run.exit;
    }
  });

  it("the fuzz kit's admissionCode() for a required agent.info is the phase's code while startup is pending and after it failed, as the server answers", () => {
    const required = ["agent.info"];
    assert.equal(admissionCode("agent.info", true, { kind: "starting", required }), "not_initialized");
    assert.equal(admissionCode("agent.info", false, { kind: "starting", required }), "invalid_params");
    assert.equal(admissionCode("agent.info", true, { kind: "failed", code: "configuration_invalid", required }), "configuration_invalid");
    assert.equal(admissionCode("agent.info", true, { kind: "starting" }), "unsupported_method");
    assert.equal(admissionCode("agent.info", true, { kind: "failed", code: "configuration_invalid" }), "unsupported_method");
  });

  it("a client that required them gets not_initialized while startup is pending and the failed startup's code after it failed, for valid params", async () => {
    const valid: Record<(typeof REQUIRED_ONLY)[number], string> = {
      "agent.info": "{}",
      "session.rewind.preview": JSON.stringify({ session_id: "01890000-0000-7000-8000-000000000000", revision: "r", message_id: "m" }),
      "session.rewind": JSON.stringify({ session_id: "01890000-0000-7000-8000-000000000000", revision: "r", message_id: "m", restore_files: false }),
    };
    for (const method of REQUIRED_ONLY) {
      const run = startServer({ env: { HOME: "/home/user", MC_HOME: HOME } });
      const init = decoder.decode(paramsFrameBytes("i", "initialize", JSON.stringify({ required_capabilities: [...REQUIRED_ONLY] })));
      run.runtime.input.push(init + decoder.decode(paramsFrameBytes("c", method, valid[method])) + decoder.decode(paramsFrameBytes("d", method, '{"x":1}')));
      const frames = await run.waitFrames(3);
      assert.equal(frames.find((frame) => frame.id === "c")!.error?.code, "not_initialized", method);
      assert.equal(frames.find((frame) => frame.id === "d")!.error?.code, "invalid_params", method);
      run.runtime.input.end();
      await run.exit;

      const failed = failing();
      assert.equal((await callRaw(failed, "initialize", JSON.stringify({ required_capabilities: [...REQUIRED_ONLY] }))).error?.code, "configuration_invalid");
      assert.equal((await callRaw(failed, method, valid[method])).error?.code, "configuration_invalid", method);
      assert.equal((await callRaw(failed, method, '{"x":1}')).error?.code, "invalid_params", method);
      failed.runtime.input.end();
      await failed.exit;
    }
  });
});
