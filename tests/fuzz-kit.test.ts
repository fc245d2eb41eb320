/**
 * The published fuzz kit as its users meet it: a failing property reports the
 * expected and the actual code and the frame as text; every labelled invalid
 * frame (`params not object` included, the old known gap) gets its code from
 * a real server; and the kit type-checks from a CommonJS TypeScript project
 * set up exactly as docs/fuzzing.md says.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { expectAnswer, frameBytes, frameText, invalidFrame, invalidFrameFor, request, selectionName } from "../src/fuzz/mod.ts";
import { isSafeDisplayName } from "../src/util/redaction.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { createServer } from "../src/server.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";

const scratch = mkdtempSync(join(tmpdir(), "magi-fuzz-kit-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the fuzz kit", () => {
  it("selectionName() yields only names the server's safety screen admits (never credential-shaped)", () => {
    // The 256-byte names once cycled letters and digits into a token run, which selection.set refuses as unsafe.
    fc.assert(fc.property(selectionName(), (name) => isSafeDisplayName(name)), { numRuns: fuzzRuns(2_000) });
  });

  it("a failing property shows the expected and actual codes and the frame as text, not bytes", () => {
    let report = "";
    try {
      fc.assert(fc.property(invalidFrame(), (frame) => expectAnswer(frame, { id: frame.id, error: { code: "wrong_code" } })), { seed: 1 });
    } catch (error) {
      // fast-check 4 reports the counterexample in the message and the property's own error as its cause.
      const failure = error as Error & { cause?: Error };
      report = `${failure.message}\n${failure.cause?.message ?? ""}`;
    }
    assert.match(report, /expected [a-z_]+ with id (null|"[^"]+"), got wrong_code with id/);
    assert.match(report, /frame: "/);
    assert.match(report, /Counterexample: \[InvalidFrame\("[^"]+" → [a-z_]+, id/);
    assert.ok(!report.includes("Uint8Array"), report);
  });

  it("frameText quotes text and escapes the bytes that are not UTF-8", () => {
    assert.equal(frameText(new TextEncoder().encode('{"a":"é"}\r')), '"{\\"a\\":\\"é\\"}\\r"');
    assert.equal(frameText(Uint8Array.from([0x7b, 0xc0, 0xaf, 0x7d])), '"{\\xc0\\xaf}"');
    assert.match(frameText(new Uint8Array(70_000).fill(0x5b)), /… \(70000 bytes\)$/);
  });

  it("every labelled invalid frame gets its code and id from a real server, params not object included", async () => {
    await fc.assert(
      fc.asyncProperty(invalidFrameFor("bad"), async (frame) => {
        const runtime = createMemoryRuntime();
        const exit = createServer(runtime).serve();
        runtime.input.push(Uint8Array.from([...frame.bytes, 0x0a, ...frameBytes(request("after", "status"))]));
        runtime.input.end();
        assert.equal(await exit, 0);
        const frames = runtime.output.frames() as { id?: unknown; error?: { code?: unknown } }[];
        expectAnswer(frame, frames[0]);
        assert.equal(frames.length, 2);
      }),
      { numRuns: 60 },
    );
  });

  it("type-checks from a CommonJS TypeScript project with module node16 and the property in a .mts file", async () => {
    const project = join(scratch, "cjs");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    symlinkSync(repoRoot(), join(project, "node_modules", "magi-code"), "dir");
    symlinkSync(join(repoRoot(), "node_modules", "fast-check"), join(project, "node_modules", "fast-check"), "dir");
    writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "cjs-app", private: true })}\n`);
    writeFileSync(join(project, "tsconfig.json"), `${JSON.stringify({ compilerOptions: { module: "node16", target: "es2022", strict: true, noEmit: true, types: [] }, include: ["*.mts"] })}\n`);
    writeFileSync(
      join(project, "fuzz.mts"),
      `import fc from "fast-check";
import { admissionCode, expectAnswer, type InvalidFrame, invalidFrame, invalidCall, type InvalidParams, type NegotiationCall, negotiationCall, paramsFrameBytes, validParams, WIRE_METHODS, type WireMethod } from "magi-code/fuzz";
const frames: fc.Arbitrary<InvalidFrame> = invalidFrame();
fc.assert(fc.property(frames, (frame) => expectAnswer(frame, { id: frame.id, error: { code: frame.code } })));
const bad: fc.Arbitrary<InvalidParams> = invalidCall({ session_id: "s1" });
fc.assert(fc.property(bad, (sample) => paramsFrameBytes("r1", sample.method, sample.json).length > 0 && sample.code === admissionCode(sample.method, false, { kind: "new" })));
const method: WireMethod = WIRE_METHODS[0]!;
const good: fc.Arbitrary<Record<string, unknown>> = validParams(method);
const calls: fc.Arbitrary<NegotiationCall> = negotiationCall();
fc.assert(fc.property(good, calls, (params, call) => typeof params === "object" && (call.code === null || typeof call.code === "string")));
`,
    );
    const child = spawn(nodeBinary(), [join(repoRoot(), "node_modules", "typescript", "bin", "tsc"), "-p", project], { stdio: ["ignore", "pipe", "pipe"] });
    const status = new Promise<number | null>((resolve) => child.once("close", resolve));
    const [code, stdout, stderr] = await Promise.all([status, collect(child.stdout), collect(child.stderr)]);
    assert.equal(code, 0, `${stdout}${stderr}`);
  });
});
