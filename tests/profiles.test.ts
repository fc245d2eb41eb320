// Agent profiles: the file format, the catalog's layers, the primary profile at
// startup, the strictest-policy rule, and what a profile changes in a turn
// (system prompt, step bound, tool policies, the new-session model).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import { type ApprovalPolicy, isAtLeastAsStrict, profilePolicy, resolvePolicy } from "../src/policy/tool-policies.ts";
import { BUILTIN_PROFILES, listProfileDirectories, MAX_PROFILE_DIRECTORY_ENTRIES, PROFILE_NAME } from "../src/config/agent-settings.ts";
import { parseProfile } from "../src/config/profile-files.ts";
import { primaryProfile, readProfileCatalog } from "../src/config/profiles.ts";
import { parseSettingsText } from "../src/config/settings.ts";
import { runStartup } from "../src/admission/startup.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { sha256Hex } from "../src/util/digest.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const diskFs: FileSystem = isDeno ? (await import(denoAdapter) as { denoFileSystem: FileSystem }).denoFileSystem : nodeFileSystem;

const HOME = "/home/user/.magi-code";
const CWD = "/work/project";
const live = () => new AbortController().signal;
const profile = (frontmatter: string, body = "") => `---\n${frontmatter}\n---\n${body}`;
const POLICIES: readonly ApprovalPolicy[] = ["allow", "ask", "deny"];
const encoder = new TextEncoder();
/** How the reader describes a file it read: its path, the SHA-256 and length of its bytes. */
const digestOf = async (path: string, text: string) => ({ path, sha256: await sha256Hex(encoder.encode(text)), bytes: encoder.encode(text).length });
const AT = (path: string) => ({ path, sha256: "0".repeat(64), bytes: 1 });

/** The catalog of a memory filesystem holding `global` and `project` profile files (name → text). */
async function catalogOf(files: { global?: Record<string, string>; project?: Record<string, string> }, fs = new MemoryFileSystem()) {
  for (const [name, text] of Object.entries(files.global ?? {})) fs.writeFile(`${HOME}/agents/${name}`, text);
  for (const [name, text] of Object.entries(files.project ?? {})) fs.writeFile(`${CWD}/.magi-code/agents/${name}`, text);
  const locations = { home: HOME, cwd: CWD, project: true };
  return await readProfileCatalog(fs, locations, await listProfileDirectories(fs, locations), live());
}

describe("profile files", () => {
  it("parseProfile() reads every key and trims the body", () => {
    const text = profile("description: Reviews diffs\nmode: all\nmodel: qwen-big\neffort: high\ntools:\n  shell: deny\n  read_file: ask\nmax_steps: 7", "\n\nBe terse.\n\n");
    assert.deepEqual(parseProfile("reviewer", text, AT("/a/reviewer.md")), {
      profile: {
        name: "reviewer",
        description: "Reviews diffs",
        mode: "all",
        model: "qwen-big",
        effort: "high",
        tools: { shell: "deny", read_file: "ask" },
        maxSteps: 7,
        body: "Be terse.",
        files: [AT("/a/reviewer.md")],
      },
    });
  });

  it("parseProfile() takes \"*\" (every tool not named) only as the whole key and only with a policy", () => {
    const parsed = parseProfile("x", profile('description: d\nmode: all\ntools:\n  "*": deny\n  read_file: allow'), AT("/a/x.md"));
    assert.deepEqual("profile" in parsed ? parsed.profile.tools : parsed.problems, { "*": "deny", read_file: "allow" });
    for (const entry of ['"*": maybe', '"*": null', '"**": deny', '"* ": deny', '"mcp__*": deny', "*: deny"]) {
      const refused = parseProfile("x", profile(`description: d\nmode: all\ntools:\n  ${entry}`), AT("/a/x.md"));
      assert.ok(!("profile" in refused), entry);
      assert.equal(refused.problems.length, 1, entry);
      // Unquoted, `*` starts a YAML alias: the frontmatter itself is refused.
      assert.match(refused.problems[0]!.message, entry.startsWith("*") ? /not YAML/ : /or \* for every tool not named, to allow, ask or deny/, entry);
    }
  });

  it("parseProfile() names the JSON path of each problem and never the value", () => {
    const secret = "sk-live-0123456789SECRET";
    const text = `description: "  "\nmode: ${secret}\neffort: extreme\ntools:\n  my tool: deny\n  grep: never\n  mcp__srv__Echo-2: deny\nmax_steps: 201\nname: x`;
    const parsed = parseProfile("x", profile(text), AT("/a/x.md"));
    assert.ok(!("profile" in parsed));
    assert.deepEqual(parsed.problems.map((problem) => problem.path), ["$.description", "$.mode", "$.effort", '$.tools["my tool"]', "$.tools.grep", "$.max_steps", "$.name"]);
    assert.equal(parseProfile("x", profile("mode: all"), AT("/a/x.md")).problems![0]!.message, "is required");
    assert.equal(parsed.problems.at(-1)!.message, "unknown key");
    assert.ok(!JSON.stringify(parsed).includes(secret));
    for (const [text, message] of [
      ["no frontmatter", /must start with a line ---/],
      ["---\nmode: all\n", /no closing line ---/],
      ["---\nmode: [\n---\n", /not YAML/],
      ["---\n- a list\n---\n", /must be a mapping/],
    ] as const) {
      const result = parseProfile("x", text, AT("/a/x.md"));
      assert.ok("problems" in result && result.problems !== undefined);
      assert.match(result.problems[0]!.message, message);
    }
  });

  it("property: a profile name is 1-64 of a-z, 0-9 and single inner hyphens, exactly", () => {
    const reference = (name: string) =>
      name.length >= 1 && name.length <= 64 && /^[a-z0-9-]+$/.test(name) && !name.startsWith("-") && !name.endsWith("-") && !name.includes("--");
    const alphabet = fc.constantFrom(..."ab09-_A.é/".split(""));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 70 }), fc.string({ maxLength: 70 })), (name) => {
        assert.equal(PROFILE_NAME.test(name), reference(name), JSON.stringify(name));
        assert.equal(parseSettingsText(JSON.stringify({ agent: { primary: name } })).ok, reference(name));
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});

describe("the profile catalog", () => {
  it("global files replace the built-in of their name; invalid and badly named files are skipped with a problem", async () => {
    const plan = profile("description: My plan\nmode: primary", "Plan my way.");
    const catalog = await catalogOf({
      global: {
        "plan.md": plan,
        "broken.md": profile("description: x\nmode: never"),
        "Caps.md": profile("description: x\nmode: all"),
        "README.txt": "not a profile",
      },
    });
    assert.deepEqual(catalog.effective.get("plan"), { name: "plan", description: "My plan", mode: "primary", tools: {}, body: "Plan my way.", files: [await digestOf(`${HOME}/agents/plan.md`, plan)] });
    assert.equal(catalog.effective.get("broken"), null);
    assert.equal(catalog.effective.get("explore"), BUILTIN_PROFILES.get("explore"));
    assert.deepEqual(catalog.problems.map((problem) => [problem.file, problem.path]), [[`${HOME}/agents/Caps.md`, "$"], [`${HOME}/agents/broken.md`, "$.mode"]]);
  });

  it("a project file layers onto the profile of its name: it tightens, appends its body, may set the model, and may not widen the mode", async () => {
    const catalog = await catalogOf({
      global: { "review.md": profile("description: Global review\nmode: all\ntools:\n  grep: ask\nmax_steps: 9", "Global body.") },
      project: {
        "review.md": profile("description: Project review\nmode: primary\nmodel: local\ntools:\n  grep: allow\n  shell: deny\nmax_steps: 20", "Project body."),
        "plan.md": profile("description: Loose plan\nmode: primary\ntools:\n  shell: allow\n  write_file: allow\n  mcp__docs__search: allow"),
        "explore.md": profile("description: Explore as primary\nmode: all"),
        "own.md": profile("description: Project only\nmode: primary\ntools:\n  read_file: deny"),
      },
    });
    const { files: _, ...review } = catalog.effective.get("review")!;
    assert.deepEqual(review, {
      name: "review",
      description: "Global review",
      mode: "primary",
      model: "local",
      tools: { grep: "ask", shell: "deny" },
      maxSteps: 9,
      body: "Global body.\n\nProject body.",
    });
    assert.deepEqual(catalog.effective.get("review")!.files.map((file) => file.path), [`${HOME}/agents/review.md`, `${CWD}/.magi-code/agents/review.md`]);
    // Loosening nothing: neither the denied built-ins nor, through plan's `*`, a tool plan does not name.
    assert.deepEqual(catalog.effective.get("plan")!.tools, { ...BUILTIN_PROFILES.get("plan")!.tools, mcp__docs__search: "deny" });
    assert.equal(catalog.effective.get("explore"), null);
    assert.deepEqual(catalog.problems.map((problem) => [problem.file, problem.path]), [[`${CWD}/.magi-code/agents/explore.md`, "$.mode"]]);
    assert.deepEqual(catalog.effective.get("own")!.tools, { read_file: "deny" });
    // What the user gets without the project: untouched.
    assert.equal(catalog.user.get("plan"), BUILTIN_PROFILES.get("plan"));
    assert.equal(catalog.user.get("own"), undefined);
  });

  it("a directory over the entry bound, or that is a file, leaves no primary profile", async () => {
    const fs = new MemoryFileSystem();
    for (let index = 0; index <= MAX_PROFILE_DIRECTORY_ENTRIES; index++) fs.writeFile(`${CWD}/.magi-code/agents/n${index}.txt`, "");
    const crowded = await catalogOf({}, fs);
    assert.deepEqual(crowded.problems, [{ file: `${CWD}/.magi-code/agents`, path: "$", message: `holds more than ${MAX_PROFILE_DIRECTORY_ENTRIES} entries` }]);
    assert.deepEqual(primaryProfile(crowded, undefined, undefined), { ok: false, problem: "invalid", name: "build" });
    const file = new MemoryFileSystem();
    file.writeFile(`${HOME}/agents`, "a file");
    assert.equal((await catalogOf({}, file)).problems[0]!.message, "is not a directory");
  });

  it("on disk: a FIFO is never opened, a project symlink or hard link to a file outside is refused, a global symlink is followed", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "magi-profiles-")));
    try {
      const [home, cwd] = [join(dir, "home"), join(dir, "repo")];
      mkdirSync(join(home, "agents"), { recursive: true });
      mkdirSync(join(cwd, ".magi-code", "agents"), { recursive: true });
      writeFileSync(join(dir, "outside.md"), profile("description: Outside\nmode: primary", "secret notes"));
      symlinkSync(join(dir, "outside.md"), join(home, "agents", "linked.md"));
      symlinkSync(join(dir, "outside.md"), join(cwd, ".magi-code", "agents", "sym.md"));
      linkSync(join(dir, "outside.md"), join(cwd, ".magi-code", "agents", "hard.md"));
      assert.equal(spawnSync("mkfifo", [join(cwd, ".magi-code", "agents", "fifo.md")]).status, 0);
      writeFileSync(join(cwd, ".magi-code", "agents", "big.md"), profile("description: Big\nmode: all", "x".repeat(70_000)));
      writeFileSync(join(cwd, ".magi-code", "agents", "latin1.md"), new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xe9, 0x0a, 0x2d, 0x2d, 0x2d, 0x0a]));
      const locations = { home, cwd, project: true };
      const catalog = await readProfileCatalog(diskFs, locations, await listProfileDirectories(diskFs, locations), live());
      assert.equal(catalog.effective.get("linked")!.body, "secret notes");
      const project = join(cwd, ".magi-code", "agents");
      assert.deepEqual(catalog.problems.map((problem) => [problem.file.slice(project.length + 1), problem.message]), [
        ["big.md", "is larger than 65536 bytes"],
        ["fifo.md", "is not a regular file"],
        ["hard.md", "has more than one hard link; a project's profile must be a file of its own"],
        ["latin1.md", "is not valid UTF-8"],
        ["sym.md", "is a symlink leading outside the workspace or into magi-code's storage"],
      ]);
      // The project's whole directory linked out of the workspace is refused before any file is read.
      rmSync(project, { recursive: true });
      symlinkSync(join(home, "agents"), project);
      const linked = await readProfileCatalog(diskFs, locations, await listProfileDirectories(diskFs, locations), live());
      assert.deepEqual(linked.problems.map((problem) => [problem.file, problem.path]), [[project, "$"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the primary profile at startup", () => {
  /** Startup on a memory runtime with settings and profile files. */
  async function start(files: { global?: unknown; project?: unknown; agents?: Record<string, string>; projectAgents?: Record<string, string> }) {
    const runtime = createMemoryRuntime({ cwd: CWD });
    if (files.global !== undefined) runtime.fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(files.global));
    if (files.project !== undefined) runtime.fs.writeFile(`${CWD}/.magi-code/settings.jsonc`, JSON.stringify(files.project));
    for (const [name, text] of Object.entries(files.agents ?? {})) runtime.fs.writeFile(`${HOME}/agents/${name}`, text);
    for (const [name, text] of Object.entries(files.projectAgents ?? {})) runtime.fs.writeFile(`${CWD}/.magi-code/agents/${name}`, text);
    return await runStartup(runtime, live());
  }

  it("is build by default, and the snapshot lists every valid profile by name", async () => {
    const outcome = await start({ agents: { "zeta.md": profile("description: Z\nmode: subagent"), "bad.md": "---\n---\n" } });
    assert.ok(outcome.ok);
    assert.equal(outcome.snapshot.profiles.primary, BUILTIN_PROFILES.get("build"));
    assert.deepEqual(outcome.snapshot.profiles.all.map((item) => item.name), ["build", "explore", "general", "plan", "zeta"]);
  });

  it("a missing, subagent-only or invalid primary is profile_invalid; the same profile unselected is only skipped", async () => {
    const code = async (files: Parameters<typeof start>[0]) => {
      const outcome = await start(files);
      return outcome.ok ? "ok" : outcome.code;
    };
    assert.equal(await code({ global: { agent: { primary: "nobody" } } }), "profile_invalid");
    assert.equal(await code({ global: { agent: { primary: "general" } } }), "profile_invalid");
    assert.equal(await code({ global: { agent: { primary: "mine" } }, agents: { "mine.md": profile("description: Mine\nmode: subagent") } }), "profile_invalid");
    assert.equal(await code({ global: { agent: { primary: "mine" } }, agents: { "mine.md": profile("mode: primary") } }), "profile_invalid");
    assert.equal(await code({ agents: { "mine.md": profile("mode: primary") } }), "ok");
    // The user's own primary is broken: a project choosing another one does not get around it.
    assert.equal(await code({ global: { agent: { primary: "mine" } }, project: { agent: { primary: "plan" } }, agents: { "mine.md": "garbage" } }), "profile_invalid");
    assert.equal(await code({ global: { agent: { primary: "plan" } } }), "ok");
  });

  it("agent.disabled_subagents: a project list adds to the global one", async () => {
    const outcome = await start({ global: { agent: { disabled_subagents: ["explore", "general"] } }, project: { agent: { disabled_subagents: ["general", "helper"] } } });
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.snapshot.settings.agent, { disabled_subagents: ["explore", "general", "helper"] });
  });

  it("property: the policy a call runs under is the strictest of settings, the user's profile and the project's", async () => {
    const policy = fc.option(fc.constantFrom(...POLICIES), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          tool: fc.constantFrom("shell", "read_file", "write_file", "grep"),
          global: policy,
          project: policy,
          userProfile: policy,
          projectProfile: policy,
          projectPicksAnother: fc.boolean(),
        }),
        async ({ tool, global, project, userProfile, projectProfile, projectPicksAnother }) => {
          const base = resolvePolicy(tool, global === undefined ? {} : { [tool]: global });
          // A project file loosening settings fails startup (settings' own trust rule); those cases are not this property's.
          fc.pre(project === undefined || isAtLeastAsStrict(project, base));
          const entry = (value: ApprovalPolicy | undefined) => value === undefined ? "" : `\ntools:\n  ${tool}: ${value}`;
          const outcome = await start({
            global: { agent: { primary: "mine" }, ...global === undefined ? {} : { tools: { [tool]: global } } },
            project: { ...projectPicksAnother ? { agent: { primary: "theirs" } } : {}, ...project === undefined ? {} : { tools: { [tool]: project } } },
            agents: { "mine.md": profile(`description: Mine\nmode: primary${entry(userProfile)}`) },
            projectAgents: { [projectPicksAnother ? "theirs.md" : "mine.md"]: profile(`description: Theirs\nmode: primary${entry(projectProfile)}`) },
          });
          assert.ok(outcome.ok, JSON.stringify(outcome));
          const { snapshot } = outcome;
          const effective = profilePolicy(resolvePolicy(tool, snapshot.settings.tools), tool, snapshot.profiles.primary).policy;
          const strictest = [base, project, userProfile, projectProfile].reduce<ApprovalPolicy>((a, b) => b !== undefined && isAtLeastAsStrict(b, a) ? b : a, "allow");
          assert.equal(effective, strictest);
        },
      ),
      { numRuns: fuzzRuns(150, 4) },
    );
  });
});
