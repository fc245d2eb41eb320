/**
 * MCP end to end, the way a user gets it, through the real entry points
 * (the Node bundle, the Deno entry, and the Node single executable where it
 * is built): a server in settings, `magi-code mcp approve --yes`, `mcp list`
 * connecting it, then a served child that starts it, a turn whose scripted
 * loopback provider calls its tool after the client approves, and a
 * shutdown that leaves no server process in the process table. An approved
 * server that fails its handshake makes `initialize` answer
 * `mcp_unavailable`, and leaves no process either.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { FAULT_SERVER, isRunning, nodeCommand } from "./support/mcp-servers.ts";
import { collect, launchers, repoRoot, spawnDirect, type Launcher } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, workspace, type Workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-mcp-"));
after(() => rmSync(root, { recursive: true, force: true }));

const EVERYTHING = join(repoRoot(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/** Runs `magi-code <args>` in the workspace; its exit code and stdout lines. */
async function command(launcher: Launcher, ws: Workspace, args: readonly string[]): Promise<{ code: number | null; lines: string[] }> {
  const child = spawnDirect(launcher, args, { cwd: ws.cwd, env: ws.env });
  child.stdin.end();
  const [stdout, code] = await Promise.all([collect(child.stdout), guarded(child.exited, args.join(" ")), collect(child.stderr)]);
  return { code, lines: stdout.trimEnd().split("\n") };
}

/** The pids whose parent is `pid`, from the process table. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const text = readFileSync(join("/proc", entry, "stat"), "utf8");
      if (Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: MCP servers end to end`, () => {
    it("approve, list, start, a turn calling the server's tool after approval, and no process after shutdown", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `ok-${launcher.name}`, provider, {
        mcp: { servers: { everything: { command: nodeCommand(), args: [EVERYTHING, "stdio"], tools: { "get-sum": "allow" } } } },
      });
      try {
        assert.equal((await command(launcher, ws, ["mcp", "approve", "everything", "--yes"])).code, 0);
        const listed = await command(launcher, ws, ["mcp", "list"]);
        assert.equal(listed.code, 0, listed.lines.join("\n"));
        assert.match(listed.lines.at(-1)!, /^everything: connects, \d+ tools$/);

        provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__everything__echo", args: { message: "end to end" } }] }));
        provider.enqueue(reply("openai-chat", { text: ["Echoed."] }));
        const client = new WireClient(launcher, ws.cwd, ws.env);
        try {
          await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
          const servers = childrenOf(client.pid!);
          assert.equal(servers.length, 1, "one server process, the child's own");
          const { session_id } = await client.ok("session.create") as { session_id: string };
          const { run_id } = await client.ok("turn.start", { session_id, prompt: "Echo it" }) as { run_id: string };
          const approval = (await client.event(run_id, "approval.requested")).data!;
          assert.equal(approval.summary, 'Call MCP tool "echo" of server "everything" with arguments {"message":"end to end"}');
          await client.ok("approval.answer", { session_id, run_id, approval_id: approval.approval_id, allow: true });
          const events = await client.runEvents(run_id);
          assert.equal(events.at(-1)!.data!.outcome, "completed");
          const sent = provider.log[1]!.body as { messages: { role: string; content: string }[] };
          assert.match(sent.messages.find((message) => message.role === "tool")!.content, /end to end/);
          const { code } = await client.shutdown();
          assert.equal(code, 0);
          assert.deepEqual(servers.filter(isRunning), [], "no server process left");
        } finally {
          client.abandon();
        }
      } finally {
        await provider.close();
      }
    });

    it("an approved server that exits during the handshake fails initialize with mcp_unavailable and leaves no process", async () => {
      const provider = await startFakeProvider();
      const record = join(root, `record-${launcher.name}.txt`);
      const ws = workspace(root, `fail-${launcher.name}`, provider, {
        mcp: { servers: { broken: { command: nodeCommand(), args: [FAULT_SERVER(), "exit-handshake", record] } } },
      });
      try {
        assert.equal((await command(launcher, ws, ["mcp", "approve", "broken", "--yes"])).code, 0);
        const listed = await command(launcher, ws, ["mcp", "list"]);
        assert.equal(listed.code, 1);
        assert.match(listed.lines.at(-1)!, /^broken: fails to start, initialize would answer mcp_unavailable: exited/);
        const client = new WireClient(launcher, ws.cwd, ws.env);
        try {
          const answer = await client.call("initialize", { required_capabilities: ["status", "shutdown"] });
          assert.deepEqual(answer.error, { code: "mcp_unavailable" });
          const pids = readFileSync(record, "utf8").split("\n").filter((entry) => entry.startsWith("pid ")).map((entry) => Number(entry.slice(4)));
          assert.equal(pids.length, 2, "mcp list and the child each started it once");
          assert.deepEqual(pids.filter(isRunning), []);
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
