/**
 * `magi-code config check` through the real entry points (the Node bundle
 * and the Deno entry): each problem is printed as file, JSON path and what is
 * wrong, every problem of both files at once, never a value from a file, and
 * the exit code says whether there was any. The wire error of the same
 * configuration stays a bare `configuration_invalid`.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { collect, launchers, repoRoot, spawnDirect } from "./support/processes.ts";
import { guarded, WireClient } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-config-check-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** A storage root and workspace with the given settings texts (null: no file). */
function setup(global: string | null, project: string | null = null) {
  const home = join(root, `home-${counter}`);
  const cwd = join(root, `cwd-${counter++}`);
  mkdirSync(home, { recursive: true });
  mkdirSync(join(cwd, ".magi-code"), { recursive: true });
  if (global !== null) writeFileSync(join(home, "settings.jsonc"), global);
  if (project !== null) writeFileSync(join(cwd, ".magi-code", "settings.jsonc"), project);
  const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home };
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  return { home, cwd, env };
}

for (const launcher of launchers()) {
  const check = async (ws: { cwd: string; env: NodeJS.ProcessEnv }, args = ["config", "check"]) => {
    const child = spawnDirect(launcher, args, { cwd: ws.cwd, env: ws.env });
    child.stdin.end();
    const [stdout, stderr, code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, "config check")]);
    return { lines: stdout.trimEnd().split("\n"), stderr, code };
  };

  describe(`${launcher.name}: magi-code config check`, () => {
    it("says there is nothing wrong with no files, and exits 0", async () => {
      const result = await check(setup(null));
      assert.equal(result.code, 0);
      assert.deepEqual(result.lines, ["magi-code config check: no problems (no configuration files; defaults apply)"]);
    });

    it("lists skipped and shadowed skills as notes, exiting 0; a published skills collection loads clean", async () => {
      const ws = setup(null);
      const user = join(root, `user-${counter++}`);
      const skills = join(user, ".agents", "skills");
      mkdirSync(join(skills, "broken"), { recursive: true });
      writeFileSync(join(skills, "broken", "SKILL.md"), "---\nname: broken\ndescription: [unclosed\n---\n");
      // Linked in, as skill installers do, from the npm package @wednesday-solutions-eng/ai-agent-skills.
      const published = join(repoRoot(), "node_modules", "@wednesday-solutions-eng", "ai-agent-skills", "skills");
      for (const name of ["wednesday-design", "wednesday-dev"]) symlinkSync(join(published, name), join(skills, name));
      const project = join(ws.cwd, ".magi-code", "skills", "wednesday-dev");
      mkdirSync(project, { recursive: true });
      writeFileSync(join(project, "SKILL.md"), "---\nname: wednesday-dev\ndescription: This project's own rules.\n---\n");
      const result = await check({ cwd: ws.cwd, env: { ...ws.env, HOME: user } });
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(result.lines, [
        `${skills}/broken/SKILL.md: $: skipped: the frontmatter is not valid YAML, or uses tags, duplicate keys, more than 8 aliases or more than 8 levels`,
        `${skills}/wednesday-dev/SKILL.md: $.name: shadowed by ${project}/SKILL.md, which comes first`,
        "magi-code config check: no problems (no configuration files; defaults apply)",
      ]);
    });

    it("escapes control, bidi and invisible characters of repository-chosen names before printing them", async () => {
      const ws = setup(null);
      const user = join(root, `user-${counter++}`);
      mkdirSync(user, { recursive: true });
      const name = "x\n\u001b[2K\u202Eevil\u200B";
      const skill = join(ws.cwd, ".magi-code", "skills", name);
      mkdirSync(skill, { recursive: true });
      writeFileSync(join(skill, "SKILL.md"), "---\nname: evil\ndescription: A skill.\n---\n");
      const result = await check({ cwd: ws.cwd, env: { ...ws.env, HOME: user } });
      assert.equal(result.code, 0, result.stderr);
      const shown = `${ws.cwd}/.magi-code/skills/x\\u{000A}\\u{001B}[2K\\u{202E}evil\\u{200B}/SKILL.md`;
      assert.deepEqual(result.lines, [
        `${shown}: $: skipped: the directory name is not a skill name (1-64 of a-z, 0-9 and single hyphens between them)`,
        "magi-code config check: no problems (no configuration files; defaults apply)",
      ]);
    });

    it("names the file and the JSON path of a typo", async () => {
      const ws = setup(`{\n  // my settings\n  "model": { "provdier": "openai" },\n}\n`);
      const result = await check(ws);
      assert.equal(result.code, 1);
      assert.deepEqual(result.lines, [`${ws.home}/settings.jsonc: $.model.provdier: unknown key`]);
    });

    it("prints every problem of both files, and never a value from them", async () => {
      const secret = "sk-live-0123456789abcdefSECRET";
      const ws = setup(
        JSON.stringify({ model: { effort: secret }, agent: { max_steps: 0 }, providers: { endpoints: { "my llm": { api: "openai-chat" } } } }),
        `{ "model": { "model": "x" } ,, }`,
      );
      const result = await check(ws);
      assert.equal(result.code, 1);
      const global = `${ws.home}/settings.jsonc`;
      const project = `${ws.cwd}/.magi-code/settings.jsonc`;
      assert.deepEqual(result.lines.map((line) => line.split(": ").slice(0, 2).join(": ")), [
        `${global}: $.model.effort`,
        `${global}: $.providers.endpoints["my llm"].base_url`,
        `${global}: $.agent.max_steps`,
        `${project}: $`,
      ]);
      assert.match(result.lines.find((line) => line.includes("max_steps"))!, /min value: must be >=1/);
      assert.match(result.lines.at(-1)!, /\$: syntax error: PropertyNameExpected at line 1, column 30$/);
      assert.ok(!result.lines.join("\n").includes(secret), "the misplaced key is never printed");
    });

    it("names the project entry that breaks the trust rule", async () => {
      const ws = setup(null, JSON.stringify({ providers: { endpoints: { ollama: { base_url: "https://example.test/v1" } } }, tools: { shell: "allow" } }));
      const result = await check(ws);
      assert.equal(result.code, 1);
      assert.deepEqual(result.lines.map((line) => line.split(": ").slice(1, 2)[0]), ["$.providers.endpoints.ollama", "$.tools.shell"]);
    });

    it("names an unknown provider at $.model.provider, and a missing key variable", async () => {
      const unknown = setup(JSON.stringify({ model: { provider: "nope" } }));
      const first = await check(unknown);
      assert.equal(first.code, 1);
      assert.match(first.lines[0]!, new RegExp(`^${unknown.home}/settings\\.jsonc: \\$\\.model\\.provider: names no provider`));
      const keyless = await check(setup(JSON.stringify({ model: { provider: "openai" } })));
      assert.equal(keyless.code, 1);
      assert.match(keyless.lines[0]!, /^environment: \$: the openai provider needs OPENAI_API_KEY set/);
    });

    it("refuses extra arguments with exit 2", async () => {
      const result = await check(setup(null), ["config", "check", "--json"]);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /'config' takes one subcommand, check/);
    });
  });
}

describe("the wire error of an invalid configuration", () => {
  it("stays exactly { code: configuration_invalid }", async () => {
    const ws = setup(`{ "model": { "provdier": "openai" } }`);
    const client = new WireClient(launchers()[0]!, ws.cwd, ws.env);
    const frame = await client.call("initialize", { required_capabilities: [] });
    await client.shutdown();
    assert.deepEqual(frame.error, { code: "configuration_invalid" });
  });
});
