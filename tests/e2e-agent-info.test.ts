/**
 * `agent.info` through the real entry points (the Node bundle and the Deno
 * entry) over real pipes: a child with a primary profile of its own, a
 * subagent profile and a disabled one, a user and a project skill, an
 * approved MCP server (connected), an unapproved and a disabled one, a
 * global hook and an unapproved project hook answers every field, and no
 * path, command, argument or secret. A client that did not negotiate it
 * gets, byte for byte, what any unknown method gets, params unread.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { launchers, repoRoot, runCommand } from "./support/processes.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { nodeCommand } from "./support/mcp-servers.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, type Workspace, workspace } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-e2e-info-")));
after(() => rmSync(root, { recursive: true, force: true }));

const EVERYTHING = join(repoRoot(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** A credentials-file key: a configured secret, also written into a skill's and a profile's description. */
const SECRET = "sk-live-agentinfo-0123456789SECRET";

const markdown = (frontmatter: Record<string, string>, body: string) =>
  `---\n${Object.entries(frontmatter).map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join("\n")}\n---\n${body}\n`;

function write(path: string, text: string, mode = 0o644): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text, { mode });
}

/** The workspace every test here runs in; `everything` still needs `mcp approve`. */
function setup(name: string, provider: Awaited<ReturnType<typeof startFakeProvider>>): Workspace {
  const server = { command: nodeCommand(), args: [EVERYTHING, "stdio"] };
  const ws = workspace(root, name, provider, {
    agent: { primary: "reviewer", disabled_subagents: ["scout-off"] },
    mcp: { servers: { everything: server, pending: server, off: { ...server, enabled: false } } },
    hooks: { UserPromptSubmit: [{ command: "/bin/sh", args: [join(root, "global-hook.sh")] }] },
  });
  write(join(ws.home, "credentials.json"), JSON.stringify({ v: 1, keys: { anthropic: SECRET } }), 0o600);
  write(join(ws.home, "agents", "reviewer.md"), markdown({ description: "Reviews changes before they land.", mode: "primary" }, "Review."));
  write(join(ws.home, "agents", "scout.md"), markdown({ description: `Scouts the tree (key ${SECRET}).`, mode: "subagent" }, "Scout."));
  write(join(ws.home, "agents", "scout-off.md"), markdown({ description: "Disabled by the settings.", mode: "subagent" }, "Off."));
  write(join(ws.home, "skills", "lint", "SKILL.md"), markdown({ name: "lint", description: `Runs the linter with ${SECRET}.` }, "Lint."));
  write(join(ws.cwd, ".magi-code", "skills", "deploy", "SKILL.md"), markdown({ name: "deploy", description: "Deploys the project." }, "Deploy."));
  write(join(ws.cwd, ".magi-code", "settings.jsonc"), JSON.stringify({ hooks: { PreToolUse: [{ command: "/bin/sh", args: [join(ws.cwd, "project-hook.sh")] }] } }));
  return ws;
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: agent.info end to end`, () => {
    it("agent.info names the profile, skills, MCP servers and their states, hooks and subagents, and nothing secret", async () => {
      const provider = await startFakeProvider();
      const ws = setup(`info-${launcher.name}`, provider);
      try {
        assert.equal((await runCommand(launcher, ws, ["mcp", "approve", "everything", "--yes"])).code, 0);
        const listed = await runCommand(launcher, ws, ["mcp", "list"]);
        const tools = Number(listed.lines.map((line) => /^everything: connects, (\d+) tools$/.exec(line)?.[1]).find((count) => count !== undefined));
        assert.ok(tools > 0, listed.lines.join("\n"));
        const client = new WireClient(launcher, ws.cwd, ws.env);
        try {
          const init = await client.ok("initialize", { required_capabilities: ["agent.info", "status", "shutdown"] });
          assert.ok((init.capabilities as string[]).includes("agent.info"));
          const frame = await client.call("agent.info");
          assert.deepEqual(frame.result, {
            profile: { name: "reviewer", description: "Reviews changes before they land." },
            skills: [
              { name: "deploy", description: "Deploys the project.", scope: "project" },
              { name: "lint", description: "Runs the linter with [redacted].", scope: "user" },
            ],
            mcp_servers: [
              { name: "everything", state: "connected", tools },
              { name: "off", state: "disabled", tools: 0 },
              { name: "pending", state: "not_approved", tools: 0 },
            ],
            hooks: [{ event: "PreToolUse", scope: "project", approved: false }, { event: "UserPromptSubmit", scope: "user", approved: true }],
            subagents: [
              { name: "explore", description: "Read-only exploration: finds files, searches code and answers questions about the workspace without changing it." },
              { name: "general", description: "General-purpose agent for a self-contained task delegated by another agent: research or multi-step changes." },
              { name: "scout", description: "Scouts the tree (key [redacted])." },
            ],
            omitted: { skills: 0, mcp_servers: 0, hooks: 0, subagents: 0 },
          });
          const line = client.lines[client.frames.indexOf(frame)]!;
          for (const secret of [SECRET, root, "/bin/sh", EVERYTHING, "hook.sh"]) assert.ok(!line.includes(secret), `the answer holds no ${secret}`);
          assert.deepEqual((await client.call("agent.info", { verbose: true })).error, { code: "invalid_params" });
          assert.equal((await client.shutdown()).code, 0);
        } finally {
          client.abandon();
        }
      } finally {
        await provider.close();
      }
    });

    it("a client that did not negotiate agent.info gets exactly the unknown-method answer, before and after initialize, whatever the params", async () => {
      const provider = await startFakeProvider();
      const ws = setup(`base-${launcher.name}`, provider);
      try {
        const client = new WireClient(launcher, ws.cwd, ws.env);
        try {
          // A response line with what differs between answers (the child, its sequence, the request id) masked.
          const masked = async (method: string, params: Record<string, unknown> = {}) => {
            const frame = await client.call(method, params);
            return client.lines[client.frames.indexOf(frame)]!
              .replace(frame.instance_id as string, "<instance>").replace(/"seq":\d+,/, "").replace(`"id":"${frame.id}"`, '"id":"<id>"');
          };
          const unknown = await masked("session.frobnicate");
          assert.match(unknown, /"error":\{"code":"unsupported_method"\}\}$/);
          assert.equal(await masked("agent.info"), unknown, "before initialize");
          const init = await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
          assert.ok(!(init.capabilities as string[]).includes("agent.info"));
          assert.equal(await masked("agent.info"), unknown);
          assert.equal(await masked("agent.info", { verbose: true }), unknown, "params are not looked at");
          assert.equal((await client.shutdown()).code, 0);
        } finally {
          client.abandon();
        }
      } finally {
        await provider.close();
      }
    });
  });
}
