/**
 * The `code_mode` settings section (`src/config/code-mode-settings.ts`):
 * its schema, that a project file may only tighten it, that a nested
 * call's policy never falls back to the direct one, and `config check`'s
 * note where a direct `deny` has no Code Mode `deny` beside it.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { checkConfiguration } from "../src/admission/config-check.ts";
import { codeModeEnabled, codeModePolicy } from "../src/config/code-mode-settings.ts";
import { loadSettings } from "../src/config/settings-load.ts";

async function load(global: unknown, project: unknown) {
  const fs = new MemoryFileSystem();
  fs.writeFile("/h/settings.jsonc", JSON.stringify(global), 0o600);
  fs.writeFile("/w/.magi-code/settings.jsonc", JSON.stringify(project), 0o600);
  return await loadSettings(fs, { global: "/h/settings.jsonc", project: "/w/.magi-code/settings.jsonc" }, new AbortController().signal);
}

test("loadSettings() reads code_mode and merges it per tool; off when no file says otherwise", async () => {
  const none = await load({}, {});
  assert.ok(none.ok);
  assert.equal(codeModeEnabled(none.settings.code_mode), false);
  const loaded = await load({ code_mode: { enabled: true, tools: { shell: "deny", "mcp__docs__search": "allow" } } }, { code_mode: { tools: { read_file: "ask" } } });
  assert.ok(loaded.ok);
  assert.deepEqual(loaded.settings.code_mode, { enabled: true, tools: { shell: "deny", "mcp__docs__search": "allow", read_file: "ask" } });
  for (const bad of [{ enabled: "yes" }, { tools: { shell: "sometimes" } }, { tools: { "bad name": "allow" } }, { extra: 1 }, { tools: [] }]) {
    assert.deepEqual(await load({ code_mode: bad }, {}), { ok: false, code: "configuration_invalid" }, JSON.stringify(bad));
  }
});

test("loadSettings(): a project may turn Code Mode off and tighten its policies, never turn it on or loosen one", async () => {
  const on = { code_mode: { enabled: true } };
  assert.equal((await load(on, { code_mode: { enabled: false, tools: { read_file: "deny", shell: "deny" } } })).ok, true);
  assert.equal((await load(on, { code_mode: { enabled: true, tools: { read_file: "allow" } } })).ok, true, "restating is not loosening");
  assert.deepEqual(await load({}, { code_mode: { enabled: true } }), { ok: false, code: "configuration_invalid" });
  assert.deepEqual(await load(on, { code_mode: { tools: { write_file: "allow" } } }), { ok: false, code: "configuration_invalid" });
  assert.deepEqual(await load({ code_mode: { tools: { grep: "deny" } } }, { code_mode: { tools: { grep: "ask" } } }), { ok: false, code: "configuration_invalid" });
  // The direct policy is not the baseline: a direct allow does not let a project allow the nested call.
  assert.deepEqual(await load({ tools: { shell: "allow" } }, { code_mode: { tools: { shell: "allow" } } }), { ok: false, code: "configuration_invalid" });
});

test("codeModePolicy() is the code_mode entry, else the tool's built-in default, never the direct setting", () => {
  assert.equal(codeModePolicy("read_file", undefined), "allow");
  assert.equal(codeModePolicy("write_file", { tools: {} }), "ask");
  assert.equal(codeModePolicy("mcp__docs__search", {}), "ask");
  assert.equal(codeModePolicy("shell", { tools: { shell: "deny" } }), "deny");
  assert.equal(codeModePolicy("toString", { tools: {} }), "ask", "no inherited property is a policy");
});

test("magi-code config check notes each direct deny that Code Mode would still run, and only with Code Mode on", async () => {
  const fs = new MemoryFileSystem();
  const runtime = createMemoryRuntime({ fs, env: { HOME: "/home/user" }, cwd: "/work/project" });
  void fs.mkdir("/home/user/.magi-code", 0o700);
  const write = (settings: unknown) => fs.writeFile("/home/user/.magi-code/settings.jsonc", JSON.stringify(settings), 0o600);
  write({ tools: { shell: "deny", write_file: "deny" }, code_mode: { enabled: true, tools: { write_file: "deny" } } });
  const report = await checkConfiguration(runtime);
  assert.deepEqual(report.problems, []);
  assert.deepEqual(report.notes.map((note) => [note.file, note.path]), [["/home/user/.magi-code/settings.jsonc", "$.code_mode.tools.shell"]]);
  assert.match(report.notes[0]!.message, /tools\.shell is deny, but Code Mode programs may still call shell/);
  write({ tools: { shell: "deny" } });
  assert.deepEqual((await checkConfiguration(runtime)).notes, []);
  fs.writeFile("/work/project/.magi-code/settings.jsonc", JSON.stringify({ code_mode: { enabled: true } }), 0o600);
  const loosening = await checkConfiguration(runtime);
  assert.deepEqual(loosening.problems.map((problem) => [problem.file, problem.path]), [["/work/project/.magi-code/settings.jsonc", "$.code_mode.enabled"]]);
});

test("magi-code config check notes an MCP server's tool deny that Code Mode would still run, by the name programs call it", async () => {
  const fs = new MemoryFileSystem();
  const runtime = createMemoryRuntime({ fs, env: { HOME: "/home/user" }, cwd: "/work/project" });
  void fs.mkdir("/home/user/.magi-code", 0o700);
  const server = { command: "/usr/bin/docs-server", tools: { "drop.all": "deny", search: "deny" } };
  fs.writeFile("/home/user/.magi-code/settings.jsonc", JSON.stringify({
    mcp: { servers: { docs: server } },
    code_mode: { enabled: true, tools: { mcp__docs__search: "deny" } },
  }), 0o600);
  const report = await checkConfiguration(runtime);
  const codeMode = report.notes.filter((note) => note.path.startsWith("$.code_mode"));
  assert.deepEqual(codeMode.map((note) => [note.file, note.path]), [["/home/user/.magi-code/settings.jsonc", "$.code_mode.tools.mcp__docs__drop_all"]]);
  assert.match(codeMode[0]!.message, /mcp\.servers\.docs\.tools\["drop\.all"\] is deny, but Code Mode programs may still call mcp__docs__drop_all/);
});
