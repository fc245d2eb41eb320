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
    entry.isDirectory() ? files(join(at, entry.name)) : entry.name.endsWith(".schema.json") ? [relative(directory, join(at, entry.name)).split("\\").join("/")] : []
  );
}

describe("wire JSON Schemas", () => {
  const generated = wireSchemas();

  it("cover the envelopes, every method's params and result, agent.info's, and every event", () => {
    const expected = [
      "event.schema.json",
      "request.schema.json",
      "response.schema.json",
      ...[...Object.keys(METHODS), "agent.info"].flatMap((method) => [`params/${method}.schema.json`, `results/${method}.schema.json`]),
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

  it("results, events and output envelopes say they allow unknown fields and keep enums closed; params and requests are strict", () => {
    const result = generated["results/turn.start.schema.json"]!;
    assert.equal(result.additionalProperties, true);
    const params = generated["params/turn.start.schema.json"]!;
    assert.equal(params.additionalProperties, false);
    const activity = generated["events/activity.schema.json"]! as { additionalProperties: unknown; properties: { kind: { enum: string[] } } };
    assert.equal(activity.additionalProperties, true);
    assert.deepEqual(activity.properties.kind.enum, ["tool", "subagent", "compaction"]);
    const branches = (name: string) => Object.values((generated[name] as { definitions: Record<string, { additionalProperties: unknown }> }).definitions);
    assert.ok(branches("request.schema.json").every((branch) => branch.additionalProperties === false));
    assert.ok([...branches("response.schema.json"), ...branches("event.schema.json")].every((branch) => branch.additionalProperties === true));
  });

  it("every document, every object in it and every field has a description", () => {
    const missing: string[] = [];
    const visit = (node: unknown, at: string, isField: boolean): void => {
      if (node === null || typeof node !== "object") return;
      if (Array.isArray(node)) return node.forEach((item, index) => visit(item, `${at}/${index}`, false));
      const object = node as Record<string, unknown>;
      const described = typeof object.description === "string" && object.description.length > 0;
      // An `if` only tests a tag; a field's own description covers the object it holds.
      if (object.properties !== undefined && !at.endsWith("/if") && !isField && !described) missing.push(`${at} (object)`);
      if (isField && !described) missing.push(at);
      for (const [key, value] of Object.entries(object)) {
        if (key === "properties" && !at.endsWith("/if")) {
          for (const [field, schema] of Object.entries(value as Record<string, unknown>)) visit(schema, `${at}/properties/${field}`, true);
        } else visit(value, `${at}/${key}`, false);
      }
    };
    for (const [path, schema] of Object.entries(generated)) visit(schema, path, false);
    assert.deepEqual(missing, []);
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
