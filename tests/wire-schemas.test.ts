/**
 * The published wire JSON Schemas: `docs/schema/` holds exactly what
 * `wireSchemas()` generates from the valibot schemas (the drift check of
 * `npm test`, `scripts/gen-wire-schemas.mjs --check`, says the same before
 * the tests run), there is one per method's params and result and per event,
 * and `magi-code schema` prints them from both entry points.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { EVENTS } from "../src/protocol/events.ts";
import { METHODS } from "../src/protocol/methods.ts";
import { wireSchemas } from "../src/protocol/json-schema.ts";
import { collect, launchers, repoRoot, spawnDirect } from "./support/processes.ts";

const directory = join(repoRoot(), "docs", "schema");

function files(at: string): string[] {
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(at, entry.name)) : [relative(directory, join(at, entry.name)).split("\\").join("/")]
  );
}

describe("wire JSON Schemas", () => {
  const generated = wireSchemas();

  it("cover the envelopes, every method's params and result, and every event", () => {
    const expected = [
      "event.schema.json",
      "request.schema.json",
      "response.schema.json",
      ...Object.keys(METHODS).flatMap((method) => [`params/${method}.schema.json`, `results/${method}.schema.json`]),
      ...Object.keys(EVENTS).map((event) => `events/${event}.schema.json`),
    ];
    assert.deepEqual(Object.keys(generated).sort(), expected.sort());
  });

  it("docs/schema/ holds exactly the generated documents (run scripts/gen-wire-schemas.mjs after changing a schema)", () => {
    assert.deepEqual(files(directory).sort(), Object.keys(generated).sort());
    for (const [path, schema] of Object.entries(generated)) {
      assert.equal(readFileSync(join(directory, path), "utf8"), `${JSON.stringify(schema, null, 2)}\n`, path);
    }
  });

  it("results and events allow unknown fields and keep enums closed; params are strict", () => {
    const result = generated["results/turn.start.schema.json"]!;
    assert.equal(result.additionalProperties, undefined);
    const params = generated["params/turn.start.schema.json"]!;
    assert.equal(params.additionalProperties, false);
    const activity = generated["events/activity.schema.json"]! as { properties: { kind: { enum: string[] } } };
    assert.deepEqual(activity.properties.kind.enum, ["tool", "subagent", "compaction"]);
  });

  for (const launcher of launchers()) {
    it(`${launcher.name}: magi-code schema prints them; extra arguments are an invalid launch`, async () => {
      const child = spawnDirect(launcher, ["schema"]);
      const [code, stdout] = await Promise.all([child.exited, collect(child.stdout)]);
      assert.equal(code, 0);
      assert.deepEqual(JSON.parse(stdout), generated);
      const bad = spawnDirect(launcher, ["schema", "--all"]);
      const [badCode, badOut, badErr] = await Promise.all([bad.exited, collect(bad.stdout), collect(bad.stderr)]);
      assert.deepEqual([badCode, badOut], [2, ""]);
      assert.match(badErr, /'schema' takes no arguments/);
    });
  }
});
