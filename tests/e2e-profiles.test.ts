/**
 * Agent profiles through the real entry points (the Node bundle and the Deno
 * entry) over real pipes: `agent.primary` naming a missing, subagent-only or
 * invalid profile fails `initialize` with the bare `profile_invalid`; the
 * built-in `plan` profile refuses writes and shell in a real turn against a
 * loopback provider and tells the model why; `magi-code config check` names
 * each profile problem's file and JSON path, never the file's text.
 */

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { collect, type Launcher, launchers, spawnDirect } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { guarded, WireClient, type Workspace, workspace } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-e2e-profiles-")));
after(() => rmSync(root, { recursive: true, force: true }));

/** Never to be printed: it sits in a profile file's body and in a bad frontmatter value. */
const SECRET = "sk-live-profile-0123456789SECRET";

let counter = 0;

/** A workspace whose settings add `settings`, with profile files (`global` under MC_HOME, `project` under the cwd). */
function setup(provider: FakeProvider, settings: Record<string, unknown>, files: { global?: Record<string, string>; project?: Record<string, string> } = {}): Workspace {
  const ws = workspace(root, `ws${counter++}`, provider, settings);
  for (const [dir, entries] of [[join(ws.home, "agents"), files.global], [join(ws.cwd, ".magi-code", "agents"), files.project]] as const) {
    if (entries === undefined) continue;
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(entries)) writeFileSync(join(dir, name), text);
  }
  return ws;
}

const profile = (frontmatter: string, body = "") => `---\n${frontmatter}\n---\n${body}`;

/** Initializes a child in `ws` and returns the response's error, then shuts it down. */
async function initializeError(launcher: Launcher, ws: Workspace): Promise<unknown> {
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    const frame = await client.call("initialize", { required_capabilities: ["status", "shutdown"] });
    const { code } = await client.shutdown();
    assert.equal(code, 0);
    const stderr = await client.stderr;
    assert.ok(!JSON.stringify(client.frames).includes(SECRET) && !stderr.includes(SECRET), "no file text leaves the child");
    return frame.error;
  } finally {
    client.abandon();
  }
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: agent profiles end to end`, () => {
    it("agent.primary naming a missing, a subagent-only or an invalid profile fails initialize with profile_invalid alone", async () => {
      const provider = await startFakeProvider();
      try {
        const cases: Workspace[] = [
          setup(provider, { agent: { primary: "reviewer" } }),
          setup(provider, { agent: { primary: "explore" } }),
          setup(provider, { agent: { primary: "reviewer" } }, { global: { "reviewer.md": profile(`description: Reviews\nmode: ${SECRET}`, SECRET) } }),
          // The user's own plan, broken by the project's layer of it.
          setup(provider, { agent: { primary: "plan" } }, { project: { "plan.md": profile("description: [unclosed\nmode: primary", SECRET) } }),
        ];
        // The user's global selection names no profile of theirs: a project's choice, whatever it is, has nothing to be tightened by.
        for (const chosen of ["yolo", "reviewer"]) {
          const ws = setup(provider, { agent: { primary: "reviewer" } }, { project: { [`${chosen}.md`]: profile("description: Anything goes\nmode: primary") } });
          writeFileSync(join(ws.cwd, ".magi-code", "settings.jsonc"), JSON.stringify({ agent: { primary: chosen } }));
          cases.push(ws);
        }
        for (const ws of cases) assert.deepEqual(await initializeError(launcher, ws), { code: "profile_invalid" });
        // The same files, with a primary that is fine, start: a profile that is not selected is only skipped.
        const fine = setup(provider, {}, { global: { "reviewer.md": profile(`description: Reviews\nmode: ${SECRET}`) } });
        assert.equal(await initializeError(launcher, fine), undefined);
      } finally {
        await provider.close();
      }
    });

    it("plan: write_file and shell are refused in a real turn, the model hears why and nothing is asked or written", async () => {
      const provider = await startFakeProvider();
      const ws = setup(provider, { agent: { primary: "plan" } });
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const session = (await client.ok("session.create")).session_id as string;
        provider.enqueue(reply("openai-chat", {
          calls: [
            { id: "w", name: "write_file", args: { path: "plan.txt", content: "x" } },
            { id: "s", name: "shell", args: { command: "touch shell.txt" } },
            { id: "r", name: "list_directory", args: { path: "." } },
          ],
        }));
        provider.enqueue(reply("openai-chat", { text: ["Here is the plan."] }));
        const run = (await client.ok("turn.start", { session_id: session, prompt: "Change things" })).run_id as string;
        const events = await client.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.ok(!events.some((frame) => frame.event === "approval.requested"), "a denied call asks no one");
        const activities = events.filter((frame) => frame.event === "activity").map((frame) => [frame.data!.name, frame.data!.state, frame.data!.summary]);
        assert.deepEqual(activities.slice(0, 2), [
          ["write_file", "failed", "write_file (denied by the plan profile)"],
          ["shell", "failed", "shell (denied by the plan profile)"],
        ]);
        assert.deepEqual(activities.slice(2).map(([name, state]) => [name, state]), [["list_directory", "started"], ["list_directory", "completed"]]);
        assert.equal(existsSync(join(ws.cwd, "plan.txt")) || existsSync(join(ws.cwd, "shell.txt")), false);
        const messages = (provider.log[1]!.body as { messages: { role: string; content: string | null }[] }).messages;
        const results = messages.filter((message) => message.role === "tool").map((message) => String(message.content));
        assert.match(results[0]!, /"plan" agent profile, which does not allow write_file/);
        assert.match(results[1]!, /"plan" agent profile, which does not allow shell/);
        assert.match(String(messages[0]!.content), /The "plan" agent profile this window runs as:\n\nYou are running as the plan agent/);
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });

    it("config check names each profile problem's file and JSON path, separates skipped profiles, and never prints a file's text", async () => {
      const provider = await startFakeProvider();
      try {
        const ws = setup(provider, { agent: { primary: "reviewer", disabled_subagents: ["build", "explore"] } }, {
          global: {
            "reviewer.md": profile(`description: Reviews\nmode: primary\ntools:\n  shell: ${SECRET}\nmax_steps: 0\ncolour: red`, SECRET),
            "helper.md": profile("mode: subagent"),
            "Bad_Name.md": profile("description: x\nmode: all"),
            "notes.txt": "not a profile",
          },
          project: { "explore.md": profile("description: Explores more\nmode: all") },
        });
        const child = spawnDirect(launcher, ["config", "check"], { cwd: ws.cwd, env: ws.env });
        child.stdin.end();
        const [stdout, stderr, code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, "config check")]);
        assert.equal(code, 1);
        assert.ok(!stdout.includes(SECRET) && !stderr.includes(SECRET), "no value or body is printed");
        const agents = join(ws.home, "agents");
        const settings = join(ws.home, "settings.jsonc");
        const project = join(ws.cwd, ".magi-code", "agents");
        const located = stdout.trimEnd().split("\n").map((line) => line.split(": ").slice(0, 2).join(": "));
        assert.deepEqual(located, [
          // Problems (startup fails): the selected profile's file, then the setting that selects it.
          `${agents}/reviewer.md: $.tools.shell`,
          `${agents}/reviewer.md: $.max_steps`,
          `${agents}/reviewer.md: $.colour`,
          `${settings}: $.agent.primary`,
          // Notes: skipped profiles and entries with no effect.
          `${agents}/Bad_Name.md: $`,
          `${agents}/helper.md: $.description`,
          `${project}/explore.md: $.mode`,
          `${settings}: $.agent.disabled_subagents[0]`,
        ]);
        const lines = stdout.split("\n");
        assert.match(lines[2]!, /unknown key$/);
        assert.match(lines[3]!, /the profile "reviewer" is invalid/);
        assert.match(lines[5]!, /is required; this profile is skipped$/);
        assert.match(lines[6]!, /may only narrow the mode "subagent"/);
      } finally {
        await provider.close();
      }
    });

    it("config check puts a global agent.primary naming no profile of the user's on the global file, even when a project supplies that name", async () => {
      const provider = await startFakeProvider();
      try {
        const ws = setup(provider, { agent: { primary: "reviewer" } }, { project: { "reviewer.md": profile("description: Anything goes\nmode: primary") } });
        writeFileSync(join(ws.cwd, ".magi-code", "settings.jsonc"), JSON.stringify({ agent: { primary: "reviewer" } }));
        const child = spawnDirect(launcher, ["config", "check"], { cwd: ws.cwd, env: ws.env });
        child.stdin.end();
        const [stdout, code] = await Promise.all([collect(child.stdout), guarded(child.exited, "config check")]);
        assert.equal(code, 1);
        assert.deepEqual(stdout.trimEnd().split("\n"), [
          `${join(ws.home, "settings.jsonc")}: $.agent.primary: names no profile of yours: neither a built-in (build, plan) nor reviewer.md in $MC_HOME/agents; a project's profile cannot stand in for it; see docs/features/runner.md`,
        ]);
      } finally {
        await provider.close();
      }
    });

    it("config check exits 0 with notes only: a profile entry looser than settings has no effect (unless it exempts its tool from a stricter *), and the files read are listed", async () => {
      const provider = await startFakeProvider();
      try {
        const ws = setup(provider, { agent: { primary: "helper" } }, {
          global: {
            "helper.md": profile("description: Helps\nmode: all\ntools:\n  shell: allow\n  grep: ask"),
            "reader.md": profile("description: Reads\nmode: all\ntools:\n  \"*\": deny\n  shell: allow\n  read_file: allow"),
          },
        });
        const child = spawnDirect(launcher, ["config", "check"], { cwd: ws.cwd, env: ws.env });
        child.stdin.end();
        const [stdout, code] = await Promise.all([collect(child.stdout), guarded(child.exited, "config check")]);
        assert.equal(code, 0);
        const file = join(ws.home, "agents", "helper.md");
        assert.deepEqual(stdout.trimEnd().split("\n"), [
          `${file}: $.tools.shell: is looser than the policy settings give (ask); a profile only tightens, so it has no effect`,
          `magi-code config check: no problems (${join(ws.home, "settings.jsonc")}, ${file}, ${join(ws.home, "agents", "reader.md")})`,
        ]);
      } finally {
        await provider.close();
      }
    });
  });
}
