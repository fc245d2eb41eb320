/**
 * Agent Skills at startup (src/config/skills.ts through runStartup): the
 * four roots and their precedence, one winner per name with the others
 * reported, `skills.disabled` from both settings files, the bounds, and
 * every way a skill is skipped without failing startup (malformed YAML, a
 * huge, binary or FIFO SKILL.md, symlinks leaving a project, hard links).
 * In memory where the filesystem allows, on disk for hard links, FIFOs and
 * a 10 MiB file.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import { runStartup, type StartupSnapshot } from "../src/admission/startup.ts";
import { loadSkills, MAX_ROOT_ENTRIES, MAX_SKILL_FILE_BYTES, MAX_SKILLS, type SkillNote, type SkillRoot } from "../src/config/skills.ts";
import { mergeSettings } from "../src/config/settings.ts";
import { resolveWorkspacePath } from "../src/policy/workspace-paths.ts";
import { repoRoot } from "./support/processes.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const diskFs: FileSystem = isDeno ? (await import(denoAdapter) as { denoFileSystem: FileSystem }).denoFileSystem : nodeFileSystem;

const USER = "/home/user";
const MC_HOME = `${USER}/.magi-code`;
const REPO = `${USER}/repo`;
const CWD = `${REPO}/packages/app`;
/** The four roots, in precedence order. */
const ROOTS = {
  cwd: `${CWD}/.magi-code/skills`,
  project: `${REPO}/.agents/skills`,
  home: `${MC_HOME}/skills`,
  user: `${USER}/.agents/skills`,
} as const;

/** A SKILL.md text. */
function skill(name: string, description = `Does ${name} things. Use when ${name} is asked for.`, extra = "", body = `# ${name}\n\nSteps.\n`): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${extra}---\n${body}`;
}

/** A memory filesystem with a git repository around the cwd and `files` (path to text or bytes). */
function world(files: Record<string, string | Uint8Array> = {}): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  void fs.mkdir(`${REPO}/.git`, 0o755);
  void fs.mkdir(CWD, 0o755);
  for (const [path, data] of Object.entries(files)) fs.writeFile(path, data);
  return fs;
}

async function start(fs: MemoryFileSystem, cwd = CWD): Promise<StartupSnapshot> {
  const outcome = await runStartup(createMemoryRuntime({ fs, cwd }), new AbortController().signal);
  assert.ok(outcome.ok, `startup succeeded: ${JSON.stringify(outcome)}`);
  return outcome.snapshot;
}

const names = (snapshot: StartupSnapshot) => snapshot.skills?.skills.map((item) => item.name);
const note = (file: string, path: string, message: string): SkillNote => ({ file, path, message });

describe("skills at startup", () => {
  it("loads no skills code when no root exists, and an empty set when a root is empty", async () => {
    assert.equal((await start(world())).skills, undefined);
    const fs = world();
    await fs.mkdir(ROOTS.user, 0o755);
    assert.deepEqual((await start(fs)).skills, { skills: [], notes: [] });
  });

  it("reads all four roots; the cwd's wins over the project root's, over MC_HOME's, over ~/.agents'; the shadowed are reported unread", async () => {
    const fs = world({
      [`${ROOTS.cwd}/shared/SKILL.md`]: skill("shared", "From the cwd."),
      [`${ROOTS.project}/shared/SKILL.md`]: skill("shared", "From the project root."),
      [`${ROOTS.home}/shared/SKILL.md`]: skill("shared", "From MC_HOME."),
      [`${ROOTS.user}/shared/SKILL.md`]: "not even frontmatter",
      [`${ROOTS.cwd}/only-cwd/SKILL.md`]: skill("only-cwd"),
      [`${ROOTS.project}/only-project/SKILL.md`]: skill("only-project"),
      [`${ROOTS.home}/only-home/SKILL.md`]: skill("only-home"),
      [`${ROOTS.user}/only-user/SKILL.md`]: skill("only-user"),
    });
    const { skills } = await start(fs);
    assert.deepEqual(skills?.skills.map(({ name, description, scope, directory, file }) => ({ name, description, scope, directory, file })), [
      { name: "only-cwd", description: "Does only-cwd things. Use when only-cwd is asked for.", scope: "project", directory: `${ROOTS.cwd}/only-cwd`, file: `${ROOTS.cwd}/only-cwd/SKILL.md` },
      { name: "only-home", description: "Does only-home things. Use when only-home is asked for.", scope: "user", directory: `${ROOTS.home}/only-home`, file: `${ROOTS.home}/only-home/SKILL.md` },
      { name: "only-project", description: "Does only-project things. Use when only-project is asked for.", scope: "project", directory: `${ROOTS.project}/only-project`, file: `${ROOTS.project}/only-project/SKILL.md` },
      { name: "only-user", description: "Does only-user things. Use when only-user is asked for.", scope: "user", directory: `${ROOTS.user}/only-user`, file: `${ROOTS.user}/only-user/SKILL.md` },
      { name: "shared", description: "From the cwd.", scope: "project", directory: `${ROOTS.cwd}/shared`, file: `${ROOTS.cwd}/shared/SKILL.md` },
    ]);
    const winner = `${ROOTS.cwd}/shared/SKILL.md`;
    // The malformed one in ~/.agents is shadowed, not parsed: its problem does not matter while a valid skill wins.
    assert.deepEqual(skills?.notes, [ROOTS.project, ROOTS.home, ROOTS.user].map((root) =>
      note(`${root}/shared/SKILL.md`, "$.name", `shadowed by ${winner}, which comes first`)
    ));
    assert.equal(skills?.skills[0]!.body, "# only-cwd\n\nSteps.");
  });

  it("lets the next root's skill win when the first one of a name is malformed", async () => {
    const fs = world({
      [`${ROOTS.cwd}/shared/SKILL.md`]: "---\nname: shared\ndescription: [unclosed\n---\n",
      [`${ROOTS.project}/shared/SKILL.md`]: skill("shared", "From the project root."),
    });
    const { skills } = await start(fs);
    assert.deepEqual(skills?.skills.map((item) => item.description), ["From the project root."]);
    assert.equal(skills?.notes.length, 1);
    assert.equal(skills?.notes[0]!.file, `${ROOTS.cwd}/shared/SKILL.md`);
    assert.match(skills!.notes[0]!.message, /^skipped: the frontmatter is not valid YAML/);
  });

  it("leaves out skills.disabled: a project list adds to the global one and cannot re-enable", async () => {
    const files = Object.fromEntries(["alpha", "beta", "gamma"].map((name) => [`${ROOTS.user}/${name}/SKILL.md`, skill(name)]));
    const fs = world({
      ...files,
      [`${MC_HOME}/settings.jsonc`]: JSON.stringify({ skills: { disabled: ["alpha", "not-installed"] } }),
      [`${CWD}/.magi-code/settings.jsonc`]: JSON.stringify({ skills: { disabled: ["beta"] } }),
    });
    const snapshot = await start(fs);
    assert.deepEqual(names(snapshot), ["gamma"]);
    assert.deepEqual(snapshot.settings.skills, { disabled: ["alpha", "not-installed", "beta"] });
    assert.deepEqual(snapshot.skills?.notes, [], "a disabled skill is neither read nor reported");
    // A project file that lists nothing, or has no skills section, leaves the global list whole.
    assert.deepEqual(mergeSettings({ skills: { disabled: ["alpha"] } }, { skills: { disabled: [] } }).skills, { disabled: ["alpha"] });
    assert.deepEqual(mergeSettings({ skills: { disabled: ["alpha"] } }, {}).skills, { disabled: ["alpha"] });
    assert.deepEqual(mergeSettings({}, { skills: { disabled: ["beta", "beta"] } }).skills, { disabled: ["beta"] });
  });

  it("refuses an invalid skills section with configuration_invalid", async () => {
    for (const skills of [{ disabled: ["Bad Name"] }, { disabled: "alpha" }, { enabled: ["alpha"] }, { disabled: Array.from({ length: 257 }, (_, i) => `s${i}`) }]) {
      const fs = world({ [`${MC_HOME}/settings.jsonc`]: JSON.stringify({ skills }) });
      const outcome = await runStartup(createMemoryRuntime({ fs, cwd: CWD }), new AbortController().signal);
      assert.deepEqual(outcome.ok ? "ok" : outcome.code, "configuration_invalid", JSON.stringify(skills));
    }
  });

  it("skips a malformed skill with its reason and JSON path, never failing startup", async () => {
    const cases: Record<string, [string | Uint8Array, string, string]> = {
      "no-front": ["# Just markdown\n", "$", "skipped: SKILL.md must start with a --- line opening its YAML frontmatter"],
      "unclosed": ["---\nname: unclosed\n", "$", "skipped: the frontmatter has no closing --- line"],
      "bad-yaml": ["---\nname: bad-yaml\ndescription: Use when: a colon\n---\n", "$", "skipped: the frontmatter is not valid YAML, or uses tags, duplicate keys, more than 8 aliases or more than 8 levels"],
      "dup-key": ["---\nname: dup-key\nname: dup-key\ndescription: d\n---\n", "$", "skipped: the frontmatter is not valid YAML, or uses tags, duplicate keys, more than 8 aliases or more than 8 levels"],
      "a-list": ["---\n- name\n---\n", "$", "skipped: the frontmatter is not a mapping of fields"],
      "mismatch": [skill("other-name"), "$.name", "skipped: must equal the name of the skill's directory"],
      "no-desc": ["---\nname: no-desc\n---\n", "$.description", "skipped: is required"],
      "blank-desc": [skill("blank-desc", " \n "), "$.description", "skipped: must be 1-1,024 characters and not blank"],
      "long-desc": [skill("long-desc", "x".repeat(1025)), "$.description", "skipped: must be 1-1,024 characters and not blank"],
      "bad-license": [skill("bad-license", undefined, "license: 12\n"), "$.license", "skipped: must be a string of 1-1,024 characters"],
      "bad-compat": [skill("bad-compat", undefined, `compatibility: ${"x".repeat(501)}\n`), "$.compatibility", "skipped: must be a string of 1-500 characters"],
      "bad-meta": [skill("bad-meta", undefined, "metadata:\n  nested:\n    a: b\n"), "$.metadata", "skipped: must be a mapping from names to strings (numbers and booleans are read as strings)"],
      "bad-tools": [skill("bad-tools", undefined, "allowed-tools:\n  - Read\n  - 3\n"), "$.allowed-tools", "skipped: must be a space-separated string or a list of strings"],
      "binary": [new Uint8Array([...new TextEncoder().encode(skill("binary")), 0, 1, 2]), "$", "skipped: SKILL.md is binary, not text"],
      "latin1": [new Uint8Array([...new TextEncoder().encode(skill("latin1")), 0xe9]), "$", "skipped: SKILL.md is not UTF-8 text"],
      "huge": [skill("huge", undefined, "", "x".repeat(MAX_SKILL_FILE_BYTES)), "$", "skipped: SKILL.md is larger than 49,152 bytes"],
    };
    const files = Object.fromEntries(Object.entries(cases).map(([name, [text]]) => [`${ROOTS.user}/${name}/SKILL.md`, text]));
    const fs = world({ ...files, [`${ROOTS.user}/Bad_Name/SKILL.md`]: skill("bad-name"), [`${ROOTS.user}/empty-dir/notes.md`]: "x" });
    const { skills } = await start(fs);
    assert.deepEqual(skills?.skills, []);
    const expected = [
      note(`${ROOTS.user}/Bad_Name/SKILL.md`, "$", "skipped: the directory name is not a skill name (1-64 of a-z, 0-9 and single hyphens between them)"),
      ...Object.entries(cases).map(([name, [, path, message]]) => note(`${ROOTS.user}/${name}/SKILL.md`, path, message)),
      note(`${ROOTS.user}/empty-dir/SKILL.md`, "$", "skipped: there is no SKILL.md"),
    ].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    assert.deepEqual(skills?.notes, expected);
  });

  it("keeps a SKILL.md of exactly 49,152 bytes, ignores hidden entries and plain files in a root, and keeps unknown fields out", async () => {
    const head = skill("exact", "Exact.", "disable-model-invocation: true\nargument-hint: '[file]'\n", "");
    const text = head + "x".repeat(MAX_SKILL_FILE_BYTES - new TextEncoder().encode(head).length);
    const fs = world({ [`${ROOTS.user}/exact/SKILL.md`]: text, [`${ROOTS.user}/.system/x/SKILL.md`]: "junk", [`${ROOTS.user}/README.md`]: "not a skill" });
    const { skills } = await start(fs);
    assert.deepEqual(names({ skills } as StartupSnapshot), ["exact"]);
    assert.deepEqual(skills?.notes, []);
    assert.deepEqual(Object.keys(skills!.skills[0]!).sort(), ["body", "description", "directory", "file", "name", "scope"]);
  });

  it("bounds a root at 256 entries and the files read at 128, and says so", async () => {
    const crowded = world(Object.fromEntries(Array.from({ length: MAX_ROOT_ENTRIES + 1 }, (_, i) => [`${ROOTS.user}/f${i}.txt`, "x"])));
    assert.deepEqual((await start(crowded)).skills?.notes, [note(ROOTS.user, "$", "has more than 256 entries; only 256 were read")]);
    const many = world(Object.fromEntries(Array.from({ length: MAX_SKILLS + 2 }, (_, i) => {
      const name = `s${String(i).padStart(3, "0")}`;
      return [`${ROOTS.user}/${name}/SKILL.md`, skill(name)];
    })));
    const { skills } = await start(many);
    assert.equal(skills?.skills.length, MAX_SKILLS);
    assert.deepEqual(skills?.notes, ["s128", "s129"].map((name) => note(`${ROOTS.user}/${name}/SKILL.md`, "$", "not read: more than 128 skills were found")));
  });

  it("never opens a FIFO SKILL.md", async () => {
    const opened: string[] = [];
    const watched = new class extends MemoryFileSystem {
      override openRead(path: string) {
        opened.push(path);
        return super.openRead(path);
      }
    }();
    watched.mkfifo(`${ROOTS.project}/pipe/SKILL.md`);
    const set = await loadSkills(watched, { roots: [{ path: ROOTS.project, scope: "project", within: REPO }], home: MC_HOME, disabled: [] }, new AbortController().signal);
    assert.deepEqual(set.notes, [note(`${ROOTS.project}/pipe/SKILL.md`, "$", "skipped: SKILL.md is not a regular file")]);
    assert.deepEqual(opened, []);
  });

  it("follows a user's symlinks anywhere but MC_HOME, a project's only inside its root", async () => {
    const fs = world({
      "/opt/store/linked/SKILL.md": skill("linked"),
      "/opt/store/escape/SKILL.md": skill("escape"),
      [`${ROOTS.project}/real/SKILL.md`]: skill("real"),
      "/etc/elsewhere/SKILL.md": skill("elsewhere"),
    });
    fs.symlink("/opt/store/linked", `${ROOTS.user}/linked`);
    fs.symlink(USER, `${ROOTS.user}/whole-home`);
    fs.symlink("/opt/store/escape", `${ROOTS.project}/escape`);
    fs.symlink("real", `${ROOTS.project}/alias`);
    fs.symlink("/nowhere", `${ROOTS.project}/dangling`);
    const { skills } = await start(fs);
    assert.deepEqual(skills?.skills.map((item) => [item.name, item.directory]), [["linked", "/opt/store/linked"], ["real", `${ROOTS.project}/real`]]);
    assert.deepEqual(skills?.notes, [
      note(`${ROOTS.project}/alias/SKILL.md`, "$.name", "skipped: must equal the name of the skill's directory"),
      note(`${ROOTS.project}/escape/SKILL.md`, "$", "skipped: is a symlink leaving its skills directory; not loaded"),
      note(`${ROOTS.user}/whole-home/SKILL.md`, "$", "skipped: contains magi-code's storage directory; not loaded"),
    ]);
    // A project root that is itself a link out of the project, or into MC_HOME, is not read at all.
    for (const target of ["/etc/agents", `${MC_HOME}/agents`]) {
      const outside = world({ [`${target}/skills/elsewhere/SKILL.md`]: skill("elsewhere") });
      outside.symlink(target, `${REPO}/.agents`);
      assert.deepEqual((await start(outside)).skills, { skills: [], notes: [note(`${REPO}/.agents/skills`, "$", "is a symlink leaving the project; its skills are not loaded")] }, target);
    }
  });

  it("reads a directory reached through two roots once, as the user's: a child started in $HOME", async () => {
    const fs = world({ [`${ROOTS.home}/mine/SKILL.md`]: skill("mine"), [`${ROOTS.user}/theirs/SKILL.md`]: skill("theirs") });
    await fs.mkdir(`${USER}/.git`, 0o755);
    // cwd=$HOME: <cwd>/.magi-code/skills is $MC_HOME/skills, and the project root's .agents/skills is ~/.agents/skills.
    const { skills } = await start(fs, USER);
    assert.deepEqual(skills?.skills.map((item) => [item.name, item.scope]), [["mine", "user"], ["theirs", "user"]]);
    assert.deepEqual(skills?.notes, []);
  });

  it("finds the project root at the nearest .git file or directory, never above the user's home", async () => {
    const nested = world({ [`${REPO}/packages/.agents/skills/inner/SKILL.md`]: skill("inner"), [`${ROOTS.project}/outer/SKILL.md`]: skill("outer") });
    nested.writeFile(`${REPO}/packages/.git`, "gitdir: ../.git/modules/packages\n");
    assert.deepEqual(names(await start(nested)), ["inner"]);
    // No repository up to $HOME: the cwd is the project root, and /.agents/skills above $HOME is never looked at.
    const bare = new MemoryFileSystem();
    bare.writeFile("/.agents/skills/root/SKILL.md", skill("root"));
    bare.writeFile(`${CWD}/.agents/skills/here/SKILL.md`, skill("here"));
    assert.deepEqual(names(await start(bare)), ["here"]);
  });
});

describe("skills on disk", () => {
  it("skips a 10 MiB SKILL.md unread, a FIFO unopened and a hard-linked project SKILL.md; follows only the user's outward links", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "magi-skills-")));
    try {
      const project = join(dir, "repo", ".agents", "skills");
      const user = join(dir, "user-skills");
      const write = (path: string, text: string) => (mkdirSync(join(path, ".."), { recursive: true }), writeFileSync(path, text));
      write(join(project, "huge", "SKILL.md"), skill("huge"));
      truncateSync(join(project, "huge", "SKILL.md"), 10 * 1024 * 1024);
      mkdirSync(join(project, "pipe"), { recursive: true });
      assert.equal(spawnSync("mkfifo", [join(project, "pipe", "SKILL.md")]).status, 0);
      write(join(dir, "secret", "SKILL.md"), skill("linked"));
      mkdirSync(join(project, "linked"));
      linkSync(join(dir, "secret", "SKILL.md"), join(project, "linked", "SKILL.md"));
      write(join(project, "fine", "SKILL.md"), skill("fine"));
      write(join(dir, "store", "shared-tool", "SKILL.md"), skill("shared-tool"));
      mkdirSync(user);
      symlinkSync(join(dir, "store", "shared-tool"), join(user, "shared-tool"));
      symlinkSync(join(dir, "store", "shared-tool"), join(project, "shared-tool"));
      mkdirSync(join(user, "hardlinked"));
      linkSync(join(dir, "secret", "SKILL.md"), join(user, "hardlinked", "SKILL.md"));
      const roots: SkillRoot[] = [{ path: project, scope: "project", within: join(dir, "repo") }, { path: user, scope: "user" }];
      const set = await loadSkills(diskFs, { roots, home: join(dir, "home"), disabled: [] }, new AbortController().signal);
      assert.deepEqual(set.skills.map((item) => [item.name, item.scope]), [["fine", "project"], ["shared-tool", "user"]]);
      assert.deepEqual(set.notes, [
        note(join(project, "huge", "SKILL.md"), "$", "skipped: SKILL.md is larger than 49,152 bytes"),
        note(join(project, "linked", "SKILL.md"), "$", "skipped: SKILL.md has more than one hard link (its other names may be outside the project)"),
        note(join(project, "pipe", "SKILL.md"), "$", "skipped: SKILL.md is not a regular file"),
        note(join(project, "shared-tool", "SKILL.md"), "$", "skipped: is a symlink leaving its skills directory; not loaded"),
        note(join(user, "hardlinked", "SKILL.md"), "$.name", "skipped: must equal the name of the skill's directory"),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the read policy's skill directories", () => {
  it("lets reads, never writes, reach inside a readable directory outside the workspace, and no link out of it", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "magi-skill-reads-")));
    try {
      const workspace = join(dir, "work");
      const home = join(dir, "mc-home");
      const skill = join(home, "skills", "pdf");
      mkdirSync(workspace);
      mkdirSync(join(skill, "references"), { recursive: true });
      writeFileSync(join(skill, "references", "FORMS.md"), "forms");
      writeFileSync(join(home, "credentials.json"), "{}");
      symlinkSync(join(home, "credentials.json"), join(skill, "references", "creds.md"));
      const scope = { fs: diskFs, workspace, home, readable: [skill] };
      const decide = (path: string, access: "read" | "write" = "read") => resolveWorkspacePath(scope, path, access);
      assert.deepEqual(await decide(join(skill, "references", "FORMS.md")), { ok: true, path: join(skill, "references", "FORMS.md") });
      assert.deepEqual(await decide(join(skill, "references", "FORMS.md"), "write"), { ok: false, reason: "outside_workspace" });
      assert.deepEqual(await decide(join(skill, "references", "creds.md")), { ok: false, reason: "outside_workspace" });
      assert.deepEqual(await decide(join(skill, "..", "..", "credentials.json")), { ok: false, reason: "outside_workspace" });
      assert.deepEqual(await resolveWorkspacePath({ fs: diskFs, workspace, home }, join(skill, "references", "FORMS.md"), "read"), { ok: false, reason: "outside_workspace" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a published skills collection", () => {
  it("loads both skills of @wednesday-solutions-eng/ai-agent-skills (npm) with every field, as installed", async () => {
    const published = join(repoRoot(), "node_modules", "@wednesday-solutions-eng", "ai-agent-skills", "skills");
    const set = await loadSkills(diskFs, { roots: [{ path: published, scope: "user" }], home: "/nonexistent-mc-home", disabled: [] }, new AbortController().signal);
    assert.deepEqual(set.notes, []);
    assert.deepEqual(set.skills.map(({ name, license, compatibility, metadata, allowedTools }) => ({ name, license, compatibility, metadata, allowedTools })), [
      { name: "wednesday-design", license: "MIT", compatibility: "React 18+, Next.js 14+, Tailwind CSS, Framer Motion", metadata: { author: "wednesday-solutions", version: "1.0" }, allowedTools: undefined },
      { name: "wednesday-dev", license: "MIT", compatibility: "Next.js 14+, React 18+, TypeScript 5+", metadata: { author: "wednesday-solutions", version: "1.0" }, allowedTools: undefined },
    ]);
    for (const skill of set.skills) {
      assert.match(skill.description, /^(Design and UX|Technical development) guidelines for Wednesday Solutions projects\./);
      assert.match(skill.body, /^# Wednesday /);
    }
  });
});
