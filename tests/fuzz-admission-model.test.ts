/**
 * The fuzz kit's model of admission (`admissionCode`) against a real child,
 * for every request name the protocol serves: the method table's names
 * (the required-only rewind methods included) and the extension requests
 * beyond it (`agent.info`, `client.tool.result`), for a base client and for
 * clients that required negotiated methods, extension capabilities or
 * required-only methods, before `initialize`, on a ready child and after a
 * failed startup. The names come from the protocol's tables, not the kit's,
 * so a request the kit forgot is a failing run here.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { admissionCode, type ChildPhase, clientToolResultParams, fieldValue, type KitMethod, REQUIRED_ONLY_FIELDS, type RequestName, validParams } from "../src/fuzz/mod.ts";
import { METHODS } from "../src/protocol/methods.ts";
import { CAPABILITIES, EXTENSION_CAPABILITIES, EXTENSION_REQUESTS, NEGOTIATED, REQUIRED_ONLY_METHODS } from "../src/protocol/negotiation.ts";
import { HOME, seedCache } from "./support/catalog.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { type Frame, type Run, startServer } from "./support/harness.ts";
import { callRaw } from "./support/params-child.ts";

/** Every request name a child may serve: its method table and the extension requests beyond it. */
const NAMES: readonly string[] = [...Object.keys(METHODS), ...Object.keys(EXTENSION_REQUESTS)];

/** The codes admission answers with; any other answer means the request reached its operation. */
const ADMISSION_CODES = ["unsupported_method", "unsupported_capability", "invalid_params", "not_initialized", "already_initialized", "configuration_invalid"];

/** An endpoint nothing listens on: a valid call that reached the network fails at once. */
const NOWHERE = "http://127.0.0.1:9/v1";
const SETTINGS = { model: { provider: "ollama", model: "qwen" }, providers: { endpoints: { ollama: { base_url: NOWHERE } }, catalog: { enabled: ["ollama/qwen"] } } };

/** The one tool a client that requires `client.tools` registers. */
const TOOL = { name: "open_editors", description: "The open files.", input_schema: { type: "object" } };

/** Params of one request name, and whether the protocol admits them (before any extension field). */
interface Params {
  readonly valid: boolean;
  readonly json: string;
}

/** Valid params of `name` for a client that negotiated nothing, so they are valid in every phase. */
function validOf(name: string): fc.Arbitrary<Record<string, unknown>> {
  if (name === "client.tool.result") return clientToolResultParams({ session_id: "s1", run_id: "r1", call_id: "ct1" });
  const requiredOnly = (REQUIRED_ONLY_FIELDS as Readonly<Record<string, typeof REQUIRED_ONLY_FIELDS["session.rewind"]>>)[name];
  if (requiredOnly === undefined) return validParams(name as KitMethod);
  return fc.tuple(...requiredOnly.map((spec) => fieldValue(spec, {}).map((value) => [spec.name, value] as const))).map((pairs) => Object.fromEntries(pairs));
}

/** For each name, valid params or params no method admits (an unknown field, or no object). */
const paramsByName: fc.Arbitrary<Readonly<Record<string, Params>>> = fc.record(Object.fromEntries(NAMES.map((name) => [
  name,
  fc.oneof(
    validOf(name).map((params): Params => ({ valid: true, json: JSON.stringify(params) })),
    fc.constantFrom('{"x":1}', "[]", "null").map((json): Params => ({ valid: false, json })),
  ),
])));

/** A base client's empty list, or negotiated methods with extension capabilities and required-only methods. */
const requiredList: fc.Arbitrary<readonly string[]> = fc.oneof(
  fc.constant([]),
  fc.tuple(fc.subarray([...NEGOTIATED]), fc.subarray([...EXTENSION_CAPABILITIES, ...REQUIRED_ONLY_METHODS]), fc.subarray([...CAPABILITIES], { maxLength: 4 }))
    .map(([negotiated, extensions, methods]) => [...new Set([...negotiated, ...extensions, ...methods])]),
);

const codeOf = (frame: Frame): string => frame.error?.code ?? "a result";

/** Calls every name but `skip` with its params and checks the answer against the kit's model in `phase`. */
async function agrees(run: Run, phase: ChildPhase, params: Readonly<Record<string, Params>>, skip: readonly string[]): Promise<void> {
  for (const name of NAMES.filter((each) => !skip.includes(each))) {
    const { valid, json } = params[name]!;
    const code = codeOf(await callRaw(run, name, json));
    // A name the kit's type does not know is the drift this test exists to catch: the model must still answer for it.
    const expected = admissionCode(name as RequestName, valid, phase);
    const where = `${name} ${json} in ${JSON.stringify(phase)}`;
    if (expected !== null) assert.equal(code, expected, where);
    else assert.ok(!ADMISSION_CODES.includes(code), `${where}: admitted by the model, answered ${code}`);
  }
}

/** Runs `body` against `run`, then ends its input whatever happened. */
async function served(run: Run, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    run.runtime.input.end();
  }
  await run.exit;
}

describe("the fuzz kit's admission model", () => {
  it("admissionCode() is the code a child answers for every request name the protocol serves, in every phase, for base and extension-requiring clients", async () => {
    await fc.assert(
      fc.asyncProperty(requiredList, paramsByName, async (required, params) => {
        const initialize = JSON.stringify(required.includes("client.tools") ? { required_capabilities: required, client_tools: [TOOL] } : { required_capabilities: required });
        const fs = new MemoryFileSystem();
        fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(SETTINGS), 0o600);
        await seedCache(fs, "ollama", "openai-chat", NOWHERE, [{ id: "qwen" }]);
        const good = startServer({ fs, env: { HOME: "/home/user", MC_HOME: HOME } });
        await served(good, async () => {
          // `initialize` would admit the child and `shutdown` end its input.
          await agrees(good, { kind: "new" }, params, ["initialize", "shutdown"]);
          const init = await callRaw(good, "initialize", initialize);
          assert.ok(init.result, JSON.stringify(init.error));
          await agrees(good, { kind: "ready", required }, params, ["shutdown"]);
        });
        const bad = new MemoryFileSystem();
        bad.writeFile(`${HOME}/settings.jsonc`, "{ not settings", 0o600);
        const failed = startServer({ fs: bad, env: { HOME: "/home/user", MC_HOME: HOME } });
        await served(failed, async () => {
          assert.equal(codeOf(await callRaw(failed, "initialize", initialize)), "configuration_invalid");
          await agrees(failed, { kind: "failed", code: "configuration_invalid", required }, params, ["shutdown"]);
        });
      }),
      { numRuns: fuzzRuns(25, 200) },
    );
  });
});
