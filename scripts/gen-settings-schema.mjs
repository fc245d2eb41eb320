#!/usr/bin/env node
/**
 * Generates docs/settings.schema.json from the valibot schema of a settings
 * file, its `mcp` section included (CompleteSettingsSchema: startup checks
 * that section only when a file has it, see src/config/settings.ts).
 *
 *   node scripts/gen-settings-schema.mjs          # rewrite the file
 *   node scripts/gen-settings-schema.mjs --check  # exit 1 if it is stale
 *
 * Run `npm run build` first: the schema is imported from the tsc output in
 * dist/, so this script stays plain Node with no TypeScript loader.
 *
 * @module
 */

import { readFile, writeFile } from "node:fs/promises";
import { toJsonSchema } from "@valibot/to-json-schema";
import { CompleteSettingsSchema } from "../dist/src/config/mcp-settings.js";

/** Where the published schema lives; package.json exports it as ./settings.schema.json. */
const OUTPUT = new URL("../docs/settings.schema.json", import.meta.url);

/** The public identity of the schema: the file as npm (and so unpkg) serves it. */
const SCHEMA_ID = "https://unpkg.com/magi-code/docs/settings.schema.json";

/**
 * Returns the schema text. `errorMode: "ignore"` is deliberate: byte-length,
 * well-formed-UTF-16, `new URL` and credential checks are valibot `check`s
 * with no JSON Schema equivalent. The schema carries the nearest expressible
 * constraints instead (`maxLength`, `pattern`), so it is slightly more
 * permissive than the runtime, never stricter.
 */
function generate() {
  const { $schema, ...body } = toJsonSchema(CompleteSettingsSchema, { target: "draft-07", errorMode: "ignore" });
  const document = {
    $schema,
    $id: SCHEMA_ID,
    title: "magi-code settings",
    description:
      "Global ($MC_HOME/settings.jsonc) and project (<cwd>/.magi-code/settings.jsonc) settings for magi-code. " +
      "See docs/settings.md.",
    ...body,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main(args) {
  const check = args.includes("--check");
  const unknown = args.filter((arg) => arg !== "--check");
  if (unknown.length > 0) {
    process.stderr.write(`usage: gen-settings-schema.mjs [--check]\n`);
    return 2;
  }
  const fresh = generate();
  if (!check) {
    await writeFile(OUTPUT, fresh);
    return 0;
  }
  let current = null;
  try {
    current = await readFile(OUTPUT, "utf8");
  } catch (error) {
    if (error?.code !== "ENOENT") throw error;
  }
  if (current === fresh) return 0;
  process.stderr.write(
    "docs/settings.schema.json is out of date; run `npm run build && node scripts/gen-settings-schema.mjs`\n",
  );
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
