/**
 * The published wire JSON Schemas as a client in another language uses
 * them, through ajv (the validator most JavaScript tooling uses), set up as
 * docs/schema/README.md says: a plain `new Ajv()` and `strict: true` compile
 * every document without format plugins; a bad request yields the errors of
 * the one method it names, not one per method; and the frames a real child
 * writes validate against the envelopes and their method's result schema.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import fc from "fast-check";
import * as v from "valibot";
import { UUID_PATTERN, wireSchemas } from "../src/protocol/json-schema.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const generated = wireSchemas();
const scratch = mkdtempSync(join(tmpdir(), "magi-schema-validation-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** One ajv that knows every document, as a client would load the published directory. */
function loaded(options: ConstructorParameters<typeof Ajv>[0] = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, ...options });
  for (const schema of Object.values(generated)) ajv.addSchema(schema);
  return ajv;
}

function validator(ajv: Ajv, path: string): ValidateFunction {
  const validate = ajv.getSchema(`https://unpkg.com/magi-code/docs/schema/${path}`);
  assert.ok(validate !== undefined, path);
  return validate;
}

function errorsOf(validate: ValidateFunction, value: unknown): ErrorObject[] {
  assert.equal(validate(value), false, JSON.stringify(value));
  return validate.errors ?? [];
}

const IDENTITY = { protocol: "magi-code.local-agent", version: 1 };

describe("the wire JSON Schemas under ajv", () => {
  it("every document compiles with a plain new Ajv() and with strict: true, no format plugin needed", () => {
    for (const [path, schema] of Object.entries(generated)) {
      for (const options of [{}, { strict: true }]) {
        assert.doesNotThrow(() => new Ajv(options).compile(schema), `${path} ${JSON.stringify(options)}`);
      }
    }
  });

  it("a turn.start request without a prompt fails on the turn.start branch alone", () => {
    const errors = errorsOf(validator(loaded(), "request.schema.json"), { ...IDENTITY, id: "r1", method: "turn.start", params: { session_id: "s" } });
    assert.ok(errors.length <= 2, JSON.stringify(errors));
    const missing = errors.find((error) => error.keyword === "required");
    assert.equal(missing?.schemaPath, "#/definitions/turn.start/properties/params/required");
    assert.equal(missing?.instancePath, "/params");
    assert.deepEqual(missing?.params, { missingProperty: "prompt" });
  });

  it("an unknown method fails once, on the method's enum", () => {
    const errors = errorsOf(validator(loaded(), "request.schema.json"), { ...IDENTITY, id: "r1", method: "turn.begin", params: {} });
    assert.deepEqual(errors.map((error) => [error.instancePath, error.keyword]), [["/method", "enum"]]);
  });

  it("a request with an extra top-level field fails on its method's branch", () => {
    const errors = errorsOf(validator(loaded(), "request.schema.json"), { ...IDENTITY, id: "r1", method: "status", params: {}, extra: 1 });
    assert.ok(errors.some((error) => error.schemaPath === "#/definitions/status/additionalProperties"), JSON.stringify(errors));
  });

  it("an event with bad data fails on that event's branch alone", () => {
    const frame = { ...IDENTITY, type: "event", instance_id: "0190a2b4-1c2d-7e3f-8a9b-0c1d2e3f4a5b", seq: 3, event: "run.finished", data: { session_id: "s", run_id: "r" } };
    const errors = errorsOf(validator(loaded(), "event.schema.json"), frame);
    assert.ok(errors.every((error) => error.schemaPath.startsWith("#/definitions/run.finished/") || error.keyword === "if"), JSON.stringify(errors));
  });

  it("a response is checked as an error response when it has error, else as a success response", () => {
    const validate = validator(loaded(), "response.schema.json");
    const output = { ...IDENTITY, type: "response", instance_id: "0190A2B4-1C2D-7E3F-8A9B-0C1D2E3F4A5B", seq: 1, id: "r1" };
    assert.equal(validate({ ...output, result: {} }), true);
    assert.equal(validate({ ...output, id: null, error: { code: "invalid_request" } }), true);
    const unknown = errorsOf(validate, { ...output, error: { code: "no_such_code" } });
    assert.ok(unknown.some((error) => error.schemaPath === "#/definitions/error/properties/error/properties/code/enum"), JSON.stringify(unknown));
    const both = errorsOf(validate, { ...output, result: {}, error: { code: "busy" } });
    assert.ok(both.some((error) => error.schemaPath === "#/definitions/error/properties/result/not"), JSON.stringify(both));
    const neither = errorsOf(validate, output);
    assert.ok(neither.some((error) => error.schemaPath === "#/definitions/result/required"), JSON.stringify(neither));
  });

  it("UUID_PATTERN accepts exactly what valibot's uuid() accepts", () => {
    const pattern = new RegExp(UUID_PATTERN);
    const uuid = v.pipe(v.string(), v.uuid());
    const hex = fc.constantFrom(..."0123456789abcdefABCDEFgG-");
    const candidates = fc.oneof(
      fc.uuid(),
      fc.uuid().map((id) => id.toUpperCase()),
      fc.string({ unit: hex, minLength: 30, maxLength: 40 }),
      fc.uuid().chain((id) => fc.nat(id.length).map((at) => id.slice(0, at) + id.slice(at + 1))),
    );
    fc.assert(fc.property(candidates, (candidate) => pattern.test(candidate) === v.is(uuid, candidate)), { numRuns: fuzzRuns(500) });
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: a real child's responses and events validate against the envelopes and their method's result`, async () => {
      const provider = await startFakeProvider();
      const ws = workspace(scratch, launcher.name, provider);
      const client = new WireClient(launcher, ws.cwd, ws.env);
      const ajv = loaded({ strict: true });
      try {
        const sent: [string, Record<string, unknown>][] = [
          ["initialize", { required_capabilities: ["status", "session.create", "session.list", "turn.start", "model.catalog", "model.catalog.status", "shutdown"] }],
          ["status", {}],
          ["session.create", {}],
          ["session.list", {}],
          ["model.catalog", {}],
          ["model.catalog.status", {}],
        ];
        for (const [method, params] of sent) {
          const frame = await client.call(method, params);
          assert.ok(validator(ajv, "response.schema.json")(frame), `${method}: ${JSON.stringify(validator(ajv, "response.schema.json").errors)}`);
          const validate = validator(ajv, `results/${method}.schema.json`);
          assert.ok(validate(frame.result), `${method}: ${JSON.stringify(validate.errors)}`);
        }
        const session = client.frames.find((frame) => frame.result?.durable === false)!.result!.session_id as string;
        provider.enqueue(reply("openai-chat", { text: ["Valid ", "frames."] }));
        const run = (await client.ok("turn.start", { session_id: session, prompt: "hello" })).run_id as string;
        const events = await client.runEvents(run);
        assert.ok(events.length >= 3);
        for (const event of events) {
          assert.ok(validator(ajv, "event.schema.json")(event), `${event.event}: ${JSON.stringify(validator(ajv, "event.schema.json").errors)}`);
          const validate = validator(ajv, `events/${event.event}.schema.json`);
          assert.ok(validate(event.data), `${event.event}: ${JSON.stringify(validate.errors)}`);
        }
        const bad = await client.callRaw("turn.start", "{}");
        assert.ok(validator(ajv, "response.schema.json")(bad), JSON.stringify(bad));
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  }
});
