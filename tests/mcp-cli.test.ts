/**
 * `magi-code mcp list | approve | revoke` through the real entry points (the
 * Node bundle and the Deno entry) with `MC_HOME` in a temporary directory:
 * what each prints and exits with, that approving needs a terminal or
 * `--yes`, that the approvals file is 0600 and binds the defining file,
 * that no env or header value is ever printed, and that `config check` and
 * `initialize` treat an unapproved server as the issue says: reported, not
 * started, never a failed `initialize`.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Launcher, launchers, runCommand } from "./support/processes.ts";
import { WireClient } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-cli-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

const ENV_SECRET = "env-value-never-printed-4711";
const HEADER_SECRET = "header-value-never-printed-0815";

/** A storage root and workspace with the given settings (null: no file). */
function setup(global: unknown, project: unknown = null) {
  const home = join(root, `home-${counter}`);
  const cwd = join(root, `cwd-${counter++}`);
  mkdirSync(home, { recursive: true });
  mkdirSync(join(cwd, ".magi-code"), { recursive: true });
  if (global !== null) writeFileSync(join(home, "settings.jsonc"), JSON.stringify(global));
  if (project !== null) writeFileSync(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify(project));
  const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home };
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  return { home, cwd, env, global: join(home, "settings.jsonc"), project: join(cwd, ".magi-code", "settings.jsonc"), approvals: join(home, "approvals.json") };
}

type Workspace = ReturnType<typeof setup>;

const run = (launcher: Launcher, ws: Workspace, args: readonly string[]) => runCommand(launcher, ws, args);

const servers = (entries: Record<string, unknown>) => ({ mcp: { servers: entries } });
const shell = { command: "sh", args: ["-c", "exit 0"], env: { SECRET_VALUE: ENV_SECRET } };
const web = { url: "https://mcp.example.test/mcp", headers: { "X-Api-Key": HEADER_SECRET }, enabled: false };

// `script` gives the command a terminal on stdin, where approve asks its question.
const hasScript = process.platform === "linux" && spawnSync("script", ["--version"]).status === 0;

for (const launcher of launchers()) {
  describe(`${launcher.name}: magi-code mcp`, () => {
    it("list says there are no servers and exits 0", async () => {
      const ws = setup(null);
      const result = await run(launcher, ws, ["mcp", "list"]);
      assert.equal(result.code, 0);
      assert.deepEqual(result.lines, [`magi-code mcp: no MCP servers in ${ws.global} or ${ws.project}`]);
    });

    it("approve refuses without a terminal or --yes; --yes approves into a 0600 file; list, revoke and list follow", async () => {
      const ws = setup(servers({ shell, web }));
      const listed = await run(launcher, ws, ["mcp", "list"]);
      assert.equal(listed.code, 0);
      assert.deepEqual(listed.lines, [
        `shell: enabled, not approved, will not start: run 'magi-code mcp approve shell' (stdio; ${ws.global})`,
        `web: disabled, not approved (http; ${ws.global})`,
      ]);

      const refused = await run(launcher, ws, ["mcp", "approve", "shell"]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^magi-code mcp: not approving shell: stdin is not a terminal; run 'magi-code mcp approve shell --yes'/);
      assert.ok(!existsSync(ws.approvals), "nothing written");

      const approved = await run(launcher, ws, ["mcp", "approve", "shell", "--yes"]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(approved.lines[0], `MCP server shell, defined in ${ws.global}:`);
      assert.match(approved.stdout, /\n {2}command +"\/[^"]*\/sh"\n {2}args +\["-c","exit 0"\]\n {2}env_names +\["SECRET_VALUE"\]\n {2}env_values_sha256 +"[0-9a-f]{64}"\n/);
      assert.match(approved.stdout, new RegExp(`\\n  cwd +"${ws.cwd}"\\n  digest +[0-9a-f]{64}\\n`));
      assert.equal(approved.lines.at(-1), "Approved shell; it starts with the next child.");
      assert.equal(statSync(ws.approvals).mode & 0o777, 0o600);
      const stored = JSON.parse(readFileSync(ws.approvals, "utf8")) as { approvals: { kind: string; name: string; source: string }[] };
      assert.deepEqual(stored.approvals.map(({ kind, name, source }) => ({ kind, name, source })), [{ kind: "mcp", name: "shell", source: ws.global }]);

      const again = await run(launcher, ws, ["mcp", "approve", "--yes", "shell"]);
      assert.equal(again.code, 0);
      assert.equal(again.lines.at(-1), "shell is already approved.");
      const webApproval = await run(launcher, ws, ["mcp", "approve", "web", "--yes"]);
      assert.match(webApproval.stdout, /\n {2}header_names +\["x-api-key"\]\n {2}header_values_sha256 +"[0-9a-f]{64}"\n {2}bearer_token_env +null\n/);
      assert.equal(webApproval.lines.at(-1), "Approved web (it is disabled in settings).");
      for (const output of [approved, again, webApproval]) {
        assert.ok(![ENV_SECRET, HEADER_SECRET].some((secret) => output.stdout.includes(secret) || output.stderr.includes(secret)), "no value is printed");
      }

      // An approved, enabled server is connected the way startup would: `sh -c 'exit 0'` is no MCP server.
      const connected = await run(launcher, ws, ["mcp", "list"]);
      assert.deepEqual(connected.lines, [
        `shell: enabled, approved, starts (stdio; ${ws.global})`,
        `web: disabled, approved (http; ${ws.global})`,
        "shell: fails to start, initialize would answer mcp_unavailable: exited, it exited before startup finished",
      ]);
      assert.equal(connected.code, 1);
      const revoked = await run(launcher, ws, ["mcp", "revoke", "shell"]);
      assert.equal(revoked.code, 0);
      assert.deepEqual(revoked.lines, ["Revoked shell; it no longer starts."]);
      assert.equal(statSync(ws.approvals).mode & 0o777, 0o600);
      const twice = await run(launcher, ws, ["mcp", "revoke", "shell"]);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /no approval of "shell" from /);
      assert.match((await run(launcher, ws, ["mcp", "list"])).lines[0]!, /^shell: enabled, not approved, will not start/);
    });

    it("a global server without cwd approved in two workspaces stays approved in both; revoke removes both", async () => {
      const a = setup(servers({ shell: { ...shell, enabled: false } }));
      const b = { ...a, cwd: join(root, `cwd-${counter++}`) };
      mkdirSync(b.cwd);
      assert.equal((await run(launcher, a, ["mcp", "approve", "shell", "--yes"])).code, 0);
      assert.match((await run(launcher, b, ["mcp", "list"])).lines[0]!, /^shell: disabled, changed since approval/);
      assert.equal((await run(launcher, b, ["mcp", "approve", "shell", "--yes"])).code, 0);
      assert.match((await run(launcher, a, ["mcp", "list"])).lines[0]!, /^shell: disabled, approved /);
      assert.match((await run(launcher, b, ["mcp", "list"])).lines[0]!, /^shell: disabled, approved /);
      assert.equal((await run(launcher, a, ["mcp", "revoke", "shell"])).code, 0);
      assert.match((await run(launcher, b, ["mcp", "list"])).lines[0]!, /^shell: disabled, not approved/);
    });

    it("approve escapes default-ignorable characters (U+034F, U+3164, U+FE0F, U+115F) in the definition it prints", async () => {
      const ws = setup(servers({ shell: { command: "sh", args: ["a\u034Fb", "-y\u3164", "pkg\uFE0F", "c\u115Fd"] } }));
      const approved = await run(launcher, ws, ["mcp", "approve", "shell", "--yes"]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.ok(approved.lines.includes(String.raw`  args               ["a\u{034F}b","-y\u{3164}","pkg\u{FE0F}","c\u{115F}d"]`), approved.stdout);
      assert.doesNotMatch(approved.stdout, /[\u034F\u3164\uFE0F\u115F]/u);
    });

    it("approve warns on stderr, and still approves, when env sets LD_PRELOAD, NODE_OPTIONS or a DYLD_ variable; never their values", async () => {
      const env = { node_options: "--require /tmp/x.js", LD_PRELOAD: ENV_SECRET, DYLD_INSERT_LIBRARIES: "/tmp/x.dylib", SECRET_VALUE: ENV_SECRET };
      const ws = setup(servers({ shell: { ...shell, env } }));
      const approved = await run(launcher, ws, ["mcp", "approve", "shell", "--yes"]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(
        approved.stderr,
        "magi-code mcp: warning: shell's env sets DYLD_INSERT_LIBRARIES, LD_PRELOAD, node_options, which make programs load code their command line does not name; approve it only if you set them on purpose\n",
      );
      assert.equal(approved.lines.at(-1), "Approved shell; it starts with the next child.");
      assert.ok(!approved.stdout.includes(ENV_SECRET) && !approved.stderr.includes(ENV_SECRET), "no value is printed");
      const plain = await run(launcher, setup(servers({ shell })), ["mcp", "approve", "shell", "--yes"]);
      assert.equal(plain.code, 0);
      assert.equal(plain.stderr, "", "no warning for a server without such a variable");
    });

    it("changing one argument shows as changed since approval; config check notes it and exits 0", async () => {
      const ws = setup(servers({ shell }));
      assert.equal((await run(launcher, ws, ["mcp", "approve", "shell", "--yes"])).code, 0);
      writeFileSync(ws.global, JSON.stringify(servers({ shell: { ...shell, args: ["-c", "exit 1"] } })));
      assert.match((await run(launcher, ws, ["mcp", "list"])).lines[0]!, /^shell: enabled, changed since approval, will not start: run 'magi-code mcp approve shell' again/);
      const checked = await run(launcher, ws, ["config", "check"]);
      assert.equal(checked.code, 0);
      assert.deepEqual(checked.lines, [
        `${ws.global}: $.mcp.servers.shell: changed since approval, will not start: run 'magi-code mcp approve shell' again`,
        `magi-code config check: no problems (${ws.global})`,
      ]);
    });

    it("a project-only server is approved from the project file, which the approval names", async () => {
      const ws = setup(null, servers({ local: shell }));
      assert.equal((await run(launcher, ws, ["mcp", "approve", "local", "--yes"])).code, 0);
      const stored = JSON.parse(readFileSync(ws.approvals, "utf8")) as { approvals: { source: string }[] };
      assert.deepEqual(stored.approvals.map((entry) => entry.source), [ws.project]);
      assert.match((await run(launcher, ws, ["mcp", "list"])).lines[0]!, /^local: enabled, approved, starts \(stdio; .*\/\.magi-code\/settings\.jsonc\)$/);
    });

    it("approve names what is wrong: an unknown server, invalid settings, a command that is not there; revoke works on invalid settings", async () => {
      const ws = setup(servers({ gone: { command: "no-such-program-here" } }));
      const unknown = await run(launcher, ws, ["mcp", "approve", "nope", "--yes"]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /^magi-code mcp: no MCP server named "nope" in /);
      const missing = await run(launcher, ws, ["mcp", "approve", "gone", "--yes"]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /cannot approve gone: command not found/);
      writeFileSync(ws.global, JSON.stringify(servers({ "bad__name": shell })));
      const invalid = await run(launcher, ws, ["mcp", "list"]);
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /the settings are invalid or cannot be read; run 'magi-code config check'/);
      const revoke = await run(launcher, ws, ["mcp", "revoke", "gone"]);
      assert.equal(revoke.code, 1);
      assert.match(revoke.stderr, /no approval of "gone"/);
    });

    it("refuses a wrong command line with exit 2 and the usage, before touching anything", async () => {
      const ws = setup(servers({ shell }));
      for (const args of [["mcp"], ["mcp", "approve"], ["mcp", "approve", "a", "b"], ["mcp", "approve", "--yes", "--yes", "a"], ["mcp", "list", "x"], ["mcp", "revoke", "--yes"], ["mcp", "frob"]]) {
        const result = await run(launcher, ws, args);
        assert.equal(result.code, 2, args.join(" "));
        assert.equal(result.stdout, "");
        assert.match(result.stderr, /'mcp' takes list, approve <name> \[--yes\], revoke <name>, login <name> or logout <name>/);
      }
      assert.ok(!existsSync(ws.approvals));
    });

    it("asks on a terminal: y approves, anything else does not", { skip: !hasScript && "needs util-linux script for a terminal" }, () => {
      for (const [answer, code] of [["y", 0], ["no", 1]] as const) {
        const ws = setup(servers({ shell }));
        const quoted = [launcher.command, ...launcher.prefix, "mcp", "approve", "shell"].map((word) => `'${word}'`).join(" ");
        const result = spawnSync("script", ["-qec", quoted, "/dev/null"], { cwd: ws.cwd, env: ws.env, input: `${answer}\n`, encoding: "utf8", timeout: 60_000 });
        assert.equal(result.status, code, result.stdout);
        assert.match(result.stdout, /Approve shell\? It will run as you, with your files and network\. \[y\/N\]/);
        assert.equal(existsSync(ws.approvals), code === 0);
      }
    });
  });

  describe(`${launcher.name}: initialize with MCP servers configured`, () => {
    it("an enabled server that is not approved does not fail initialize", async () => {
      const ws = setup(servers({ shell }), servers({ local: { url: "http://127.0.0.1:9/mcp" } }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const result = await client.ok("initialize", { required_capabilities: [] }) as { status: { readiness: string } };
        assert.equal(result.status.readiness, "ready");
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
      }
    });

    it("an approved, enabled server whose command is gone fails initialize with mcp_unavailable, and mcp list names it and exits 1", async () => {
      const ws = setup(null);
      const script = join(ws.cwd, "server.sh");
      writeFileSync(script, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
      writeFileSync(ws.global, JSON.stringify(servers({ gone: { command: script } })));
      assert.equal((await run(launcher, ws, ["mcp", "approve", "gone", "--yes"])).code, 0);
      rmSync(script);
      const listed = await run(launcher, ws, ["mcp", "list"]);
      assert.deepEqual(listed.lines, [
        `gone: enabled, command not found (not on PATH, not executable, or no such file), approved, so initialize fails (stdio; ${ws.global})`,
        "gone: fails to start, initialize would answer mcp_unavailable: spawn_failed, its command could not be started",
      ]);
      assert.equal(listed.code, 1);
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        assert.deepEqual((await client.call("initialize", { required_capabilities: [] })).error, { code: "mcp_unavailable" });
      } finally {
        client.abandon();
      }
    });

    it("startup reads the approvals file only when a server is configured: one others may read is then configuration_invalid", async () => {
      for (const [settings, expected] of [[{}, null], [servers({ shell }), "configuration_invalid"]] as const) {
        const ws = setup(settings);
        writeFileSync(ws.approvals, '{"v":1,"approvals":[]}\n', { mode: 0o644 });
        const client = new WireClient(launcher, ws.cwd, ws.env);
        try {
          const frame = await client.call("initialize", { required_capabilities: [] });
          assert.deepEqual(frame.error ?? null, expected === null ? null : { code: expected });
          await client.shutdown();
        } finally {
          client.abandon();
        }
        const checked = await run(launcher, ws, ["config", "check"]);
        assert.equal(checked.code, expected === null ? 0 : 1);
        if (expected !== null) assert.match(checked.lines[0]!, new RegExp(`^${ws.approvals}: \\$: must be an owner-only \\(chmod 600\\) regular file`));
      }
    });

    it("a project file redefining a global server fails initialize with configuration_invalid", async () => {
      const ws = setup(servers({ shell }), servers({ shell: { command: "sh", args: ["-c", "echo owned"] } }));
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        const frame = await client.call("initialize", { required_capabilities: [] });
        assert.deepEqual(frame.error, { code: "configuration_invalid" });
        await client.shutdown();
      } finally {
        client.abandon();
      }
      const checked = await run(launcher, ws, ["config", "check"]);
      assert.equal(checked.code, 1);
      assert.deepEqual(checked.lines.map((line) => line.split(": ").slice(0, 2).join(": ")), [`${ws.project}: $.mcp.servers.shell.command`, `${ws.project}: $.mcp.servers.shell.args`]);
    });
  });
}
