/**
 * Skills in real turns against a loopback provider (each API's wire format):
 * the request carries exactly the enabled skills' names and descriptions and
 * offers `skill` only when there are any; `skill` returns the body and the
 * skill's files without asking; `read_file` reads inside an enabled skill's
 * directory, and nowhere else outside the workspace; a skill's
 * `allowed-tools` widens no policy.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { reply } from "./support/provider-scripts.ts";
import { leaves } from "./support/request-checks.ts";
import { type Frame } from "./support/harness.ts";
import { HOME, nextEvent, request, runEvents, startTurn, startTurnServer, stopTurnServer } from "./support/turns.ts";
import { repoRoot } from "./support/processes.ts";

const APIS: ProviderApi[] = ["openai-chat", "openai-responses", "anthropic-messages"];
const USER_SKILLS = "/home/user/.agents/skills";
const PDF = `${USER_SKILLS}/pdf-tools`;
const PDF_DESCRIPTION = "Extract text and tables from PDF files and fill PDF forms. Use when the user mentions PDFs.";

const skillText = (name: string, description: string, extra = "", body = `# ${name}\n\nFollow these steps.\n`) =>
  `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${extra}---\n${body}`;

/** A filesystem with skills in three roots, one disabled, one shadowed twice, one malformed. */
function skillWorld(): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  fs.writeFile(`${PDF}/SKILL.md`, skillText("pdf-tools", PDF_DESCRIPTION, "license: MIT\n", "# PDF tools\n\nRun scripts/extract.py, then read references/FORMS.md.\n"));
  fs.writeFile(`${PDF}/scripts/extract.py`, "print('text')\n");
  fs.writeFile(`${PDF}/references/FORMS.md`, "Form fields are named like field_1.\n");
  fs.symlink("/home/user/.ssh/id_ed25519", `${PDF}/references/key.md`);
  fs.writeFile("/home/user/.ssh/id_ed25519", "PRIVATE KEY\n");
  fs.writeFile("/home/user/notes.txt", "outside every skill\n");
  fs.writeFile(`${USER_SKILLS}/shared/SKILL.md`, skillText("shared", "The user's copy."));
  fs.writeFile(`${HOME}/skills/shared/SKILL.md`, skillText("shared", "MC_HOME's copy."));
  fs.writeFile("/work/project/.magi-code/skills/shared/SKILL.md", skillText("shared", "The project's copy."));
  fs.writeFile(`${USER_SKILLS}/off/SKILL.md`, skillText("off", "A disabled skill."));
  fs.writeFile(`${USER_SKILLS}/broken/SKILL.md`, "---\nname: broken\n---\n");
  return fs;
}

const systemText = (api: ProviderApi, body: Record<string, unknown>): string =>
  api === "openai-chat" ? (body.messages as { content: string }[])[0]!.content : api === "anthropic-messages" ? body.system as string : body.instructions as string;

const toolNames = (api: ProviderApi, body: Record<string, unknown>): string[] =>
  (body.tools as Record<string, unknown>[]).map((tool) => api === "openai-chat" ? (tool.function as { name: string }).name : tool.name as string);

/** The text of every tool result in a request body, in order. */
function toolResults(api: ProviderApi, body: Record<string, unknown>): string[] {
  const items = (api === "openai-responses" ? body.input : body.messages) as Record<string, unknown>[];
  const blocks = api === "anthropic-messages" ? items.flatMap((item) => Array.isArray(item.content) ? item.content as Record<string, unknown>[] : []) : items;
  return blocks.filter((block) => block.type === "tool_result" || block.type === "function_call_output" || block.role === "tool").map((block) => leaves(block.content ?? block.output).join(""));
}

const activities = (events: readonly Frame[]) =>
  events.filter((frame) => frame.event === "activity").map((frame) => frame.data as { name: string; state: string; summary: string });

for (const api of APIS) {
  describe(`skills over ${api}`, () => {
    it("the request carries exactly the enabled skills' names and descriptions, and offers skill only with skills", async () => {
      const server = await startTurnServer(api, { fs: skillWorld(), settings: { skills: { disabled: ["off"] } } });
      server.provider.enqueue(reply(api, { text: ["Noted."] }));
      await runEvents(server, (await startTurn(server, "What can you do?")).runId);
      const sent = server.provider.log[0]!.body as Record<string, unknown>;
      const listed = systemText(api, sent).split("\nAvailable skills:\n")[1]!;
      assert.deepEqual(listed.split("\n"), [`- pdf-tools: ${PDF_DESCRIPTION}`, "- shared: The project's copy."]);
      assert.deepEqual(toolNames(api, sent), ["read_file", "list_directory", "glob", "grep", "write_file", "edit_file", "shell", "skill", "task"]);
      assert.equal(await stopTurnServer(server), 0);

      const plain = await startTurnServer(api);
      plain.provider.enqueue(reply(api, { text: ["Noted."] }));
      await runEvents(plain, (await startTurn(plain, "What can you do?")).runId);
      const bare = plain.provider.log[0]!.body as Record<string, unknown>;
      assert.ok(!systemText(api, bare).includes("skill"), "no skills section without skills");
      assert.ok(!toolNames(api, bare).includes("skill"));
      assert.equal(await stopTurnServer(plain), 0);
    });
  });
}

describe("the skill tool in a turn", () => {
  const api: ProviderApi = "openai-chat";

  it("returns the body and the files unasked; read_file reads inside the skill's directory and nowhere else outside the workspace", async () => {
    const server = await startTurnServer(api, { fs: skillWorld() });
    server.provider.enqueue(reply(api, {
      calls: [
        { id: "c1", name: "skill", args: { name: "pdf-tools" } },
        { id: "c2", name: "read_file", args: { path: `${PDF}/references/FORMS.md` } },
        { id: "c3", name: "read_file", args: { path: `${PDF}/references/key.md` } },
        { id: "c4", name: "read_file", args: { path: `${PDF}/../../../notes.txt` } },
        { id: "c5", name: "skill", args: { name: "off-the-list" } },
        { id: "c6", name: "skill", args: { name: "pdf-tools", file: "SKILL.md" } },
      ],
    }));
    server.provider.enqueue(reply(api, { text: ["Done."] }));
    const { runId } = await startTurn(server, "Fill the PDF form");
    const events = await runEvents(server, runId);
    assert.ok(!events.some((frame) => frame.event === "approval.requested"), "nothing asked: skill and read_file are allow");
    const results = toolResults(api, server.provider.log[1]!.body as Record<string, unknown>);
    assert.equal(results[0], [
      '<skill name="pdf-tools">',
      "# PDF tools\n\nRun scripts/extract.py, then read references/FORMS.md.",
      "</skill>",
      "",
      `Skill directory: ${PDF}`,
      "Paths in the skill are relative to that directory. Read its files with read_file using absolute paths; run its scripts " +
      "with shell. Each call needs the approval its tool needs: a skill never grants any.",
      "",
      "Files (2 files):",
      "references/FORMS.md",
      "scripts/extract.py",
    ].join("\n"));
    assert.equal(results[1], "Form fields are named like field_1.\n");
    assert.equal(results[2], "Refused: the path is outside the workspace.");
    assert.equal(results[3], "Refused: the path is outside the workspace.");
    assert.match(results[4]!, /^There is no enabled skill named "off-the-list"/);
    assert.match(results[5]!, /^Invalid arguments for skill: file: /);
    assert.deepEqual(activities(events).filter((item) => item.state !== "started").map((item) => [item.name, item.state, item.summary]), [
      ["skill", "completed", "skill pdf-tools: loaded, 2 files listed"],
      ["read_file", "completed", 'read_file "skill pdf-tools: references/FORMS.md": 1 line (36 bytes)'],
      ["read_file", "failed", `read_file "${PDF}/references/key.md": refused (outside_workspace)`],
      ["read_file", "failed", `read_file "${PDF}/../../../notes.txt": refused (outside_workspace)`],
      ["skill", "failed", "skill off-the-list: no such skill"],
      ["skill", "failed", "skill: invalid arguments"],
    ]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a skill's allowed-tools widens no policy: a denied tool stays denied, an asking one still asks", async () => {
    const fs = new MemoryFileSystem();
    fs.writeFile(`${USER_SKILLS}/deployer/SKILL.md`, skillText("deployer", "Deploys the app. Use when asked to deploy.", "allowed-tools: shell write_file Bash(*) Write Edit\n", "Write deploy.txt, then run ./deploy.sh.\n"));
    const server = await startTurnServer(api, { fs, settings: { tools: { shell: "deny" } } });
    server.provider.enqueue(reply(api, { calls: [{ id: "c1", name: "skill", args: { name: "deployer" } }, { id: "c2", name: "shell", args: { command: "./deploy.sh" } }] }));
    server.provider.enqueue(reply(api, { calls: [{ id: "c3", name: "write_file", args: { path: "deploy.txt", content: "go\n" } }] }));
    server.provider.enqueue(reply(api, { text: ["Stopped."] }));
    const { sessionId, runId } = await startTurn(server, "Deploy");
    const approval = await nextEvent(server, runId, "approval.requested");
    assert.match((approval.data as { summary: string }).summary, /deploy\.txt/);
    const answered = await request(server, "deny", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: (approval.data as { approval_id: string }).approval_id, allow: false });
    assert.deepEqual(answered.result, { recorded: true });
    const events = await runEvents(server, runId);
    assert.deepEqual(toolResults(api, server.provider.log[1]!.body as Record<string, unknown>)[1], "The tool call was denied by the user's settings. Do not retry it.");
    assert.deepEqual(toolResults(api, server.provider.log[2]!.body as Record<string, unknown>)[2], "The user denied this tool call.");
    assert.equal(server.runtime.fs.exists("/work/project/deploy.txt"), false);
    assert.deepEqual(activities(events).map((item) => [item.name, item.state]), [
      ["skill", "started"],
      ["skill", "completed"],
      ["shell", "failed"],
      ["write_file", "failed"],
    ]);
    assert.equal(await stopTurnServer(server), 0);
  });

  it("tools.skill applies like any tool's policy: deny refuses it, ask asks", async () => {
    for (const policy of ["deny", "ask"] as const) {
      const server = await startTurnServer(api, { fs: skillWorld(), settings: { tools: { skill: policy } } });
      server.provider.enqueue(reply(api, { calls: [{ id: "c1", name: "skill", args: { name: "pdf-tools" } }] }));
      server.provider.enqueue(reply(api, { text: ["Ok."] }));
      const { sessionId, runId } = await startTurn(server, "Use the PDF skill");
      if (policy === "ask") {
        const approval = await nextEvent(server, runId, "approval.requested");
        assert.equal((approval.data as { summary: string }).summary, "Load the skill pdf-tools");
        await request(server, "allow", "approval.answer", { session_id: sessionId, run_id: runId, approval_id: (approval.data as { approval_id: string }).approval_id, allow: true });
      }
      await runEvents(server, runId);
      const result: string = toolResults(api, server.provider.log[1]!.body as Record<string, unknown>)[0]!;
      if (policy === "deny") assert.equal(result, "The tool call was denied by the user's settings. Do not retry it.");
      else assert.match(result, /^<skill name="pdf-tools">/);
      assert.equal(await stopTurnServer(server), 0);
    }
  });
});

describe("a published skill in a turn", () => {
  it("wednesday-dev from @wednesday-solutions-eng/ai-agent-skills (npm) is listed, loaded and its reference read", async () => {
    const api: ProviderApi = "anthropic-messages";
    const source = join(repoRoot(), "node_modules", "@wednesday-solutions-eng", "ai-agent-skills", "skills", "wednesday-dev");
    const target = `${USER_SKILLS}/wednesday-dev`;
    const fs = new MemoryFileSystem();
    for (const entry of readdirSync(source, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      fs.writeFile(`${target}/${path.slice(source.length + 1)}`, readFileSync(path));
    }
    const server = await startTurnServer(api, { fs });
    server.provider.enqueue(reply(api, { calls: [{ id: "c1", name: "skill", args: { name: "wednesday-dev" } }] }));
    server.provider.enqueue(reply(api, { calls: [{ id: "c2", name: "read_file", args: { path: `${target}/references/NAMING.md`, end_line: 1 } }] }));
    server.provider.enqueue(reply(api, { text: ["Following the naming rules."] }));
    await runEvents(server, (await startTurn(server, "Review my component names")).runId);
    const first = server.provider.log[0]!.body as Record<string, unknown>;
    assert.match(systemText(api, first), /\n- wednesday-dev: Technical development guidelines for Wednesday Solutions projects\. /);
    const [loaded, read] = toolResults(api, server.provider.log[2]!.body as Record<string, unknown>);
    assert.match(loaded!, /^<skill name="wednesday-dev">\n# Wednesday Technical Development Guidelines\n/);
    assert.match(loaded!, /\nFiles \(2 files\):\nreferences\/COMPLEXITY\.md\nreferences\/NAMING\.md$/);
    assert.equal(read, `${readFileSync(join(source, "references", "NAMING.md"), "utf8").split("\n")[0]}\n[Lines 1–1.]`);
    assert.equal(await stopTurnServer(server), 0);
  });
});
