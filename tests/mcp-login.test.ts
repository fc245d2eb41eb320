/**
 * `magi-code mcp login | logout` through the real entry points (the Node
 * bundle, the Deno entry, and the Node single executable where it is built)
 * against a loopback MCP server behind OAuth (`support/oauth-mcp-server.ts`):
 * login refuses what is not an approved HTTP server without contacting it;
 * a login (the test plays the browser with the URL the command prints)
 * stores the tokens owner-only and never prints them; a child starts with
 * the stored login and refreshes an expired token without asking; a login
 * the server refuses and cannot refresh makes `initialize` answer
 * `mcp_unavailable` and `mcp list` say a login is needed; logout removes the
 * server's entry and leaves the file 0600.
 */

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { guarded } from "./support/hang-guard.ts";
import { browse } from "./support/oauth-browser.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "./support/oauth-mcp-server.ts";
import { collect, type Launcher, launchers, spawnDirect } from "./support/processes.ts";
import { WireClient } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-mcp-login-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** A storage root and workspace whose global settings define `servers`. */
function setup(servers: Record<string, unknown>) {
  const home = join(root, `home-${counter}`);
  const cwd = join(root, `cwd-${counter++}`);
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(home, "settings.jsonc"), JSON.stringify({ mcp: { servers } }));
  const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" };
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  return { home, cwd, env, tokens: join(home, "mcp-tokens.json") };
}

type Workspace = ReturnType<typeof setup>;

/** What a finished command printed. */
interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `magi-code <args>`; `onLine` sees each stdout line as it arrives. */
async function run(launcher: Launcher, ws: Workspace, args: readonly string[], onLine: (line: string) => void = () => {}): Promise<Ran> {
  const child = spawnDirect(launcher, args, { cwd: ws.cwd, env: ws.env });
  child.stdin.end();
  let stdout = "";
  let seen = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    for (let end = stdout.indexOf("\n", seen); end !== -1; end = stdout.indexOf("\n", seen)) {
      onLine(stdout.slice(seen, end));
      seen = end + 1;
    }
  });
  const ended = new Promise<void>((resolve) => child.stdout.once("end", resolve));
  const [stderr, code] = await Promise.all([collect(child.stderr), guarded(child.exited, args.join(" ")), ended]);
  return { code, stdout, stderr };
}

/** `mcp login <name>`, opening the URL it prints. */
function login(launcher: Launcher, ws: Workspace, name: string): Promise<Ran> {
  let opening = false;
  return run(launcher, ws, ["mcp", "login", name], (line) => {
    if (opening) void browse(line);
    opening = line === `Open this URL in a browser to log in to ${name}:`;
  });
}

/** The tokens file's servers and its mode bits. */
function stored(ws: Workspace): { servers: Record<string, { url: string; tokens: { access_token: string } | null }>; mode: number } {
  return { servers: JSON.parse(readFileSync(ws.tokens, "utf8")).servers, mode: statSync(ws.tokens).mode & 0o777 };
}

/** Starts a child and answers its `initialize`: the error code, or null when ready. */
async function initialize(launcher: Launcher, ws: Workspace): Promise<string | null> {
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    const frame = await client.call("initialize", { required_capabilities: ["status", "shutdown"] });
    assert.equal((await client.shutdown()).code, 0);
    return (frame.error as { code: string } | undefined)?.code ?? null;
  } finally {
    client.abandon();
  }
}

/** Runs `body` with a fresh OAuth-protected server, closed afterwards. */
async function withServer(body: (server: OAuthMcpServer) => Promise<void>): Promise<void> {
  const server = await startOAuthMcpServer();
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

/** A workspace with the approved HTTP server `remote` at `server`. */
async function approved(launcher: Launcher, server: OAuthMcpServer): Promise<Workspace> {
  const ws = setup({ remote: { url: server.url } });
  assert.equal((await run(launcher, ws, ["mcp", "approve", "remote", "--yes"])).code, 0);
  return ws;
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: magi-code mcp login and logout`, () => {
    it("login refuses an unapproved server and a stdio one (exit 1, says why) without contacting anything", () =>
      withServer(async (server) => {
        const ws = setup({ remote: { url: server.url }, local: { command: "sh", args: ["-c", "exit 0"] } });
        const unapproved = await login(launcher, ws, "remote");
        assert.equal(unapproved.code, 1);
        assert.equal(unapproved.stdout, "");
        assert.equal(unapproved.stderr, "magi-code mcp: not logging in to remote: it is not approved; run 'magi-code mcp approve remote' first\n");
        const stdio = await login(launcher, ws, "local");
        assert.equal(stdio.code, 1);
        assert.equal(stdio.stderr, "magi-code mcp: local is a stdio server; only HTTP servers log in\n");
        assert.deepEqual(server.requests, [], "the server was never contacted");
        assert.ok(!existsSync(ws.tokens), "no tokens file");
      }));

    it("login stores the tokens (0600, never printed); a child uses them and refreshes an expired one; logout removes the entry", () =>
      withServer(async (server) => {
        const ws = await approved(launcher, server);
        const loggedIn = await login(launcher, ws, "remote");
        assert.equal(loggedIn.code, 0, loggedIn.stderr);
        assert.match(loggedIn.stdout, /^Open this URL in a browser to log in to remote:\nhttp:\/\/127\.0\.0\.1:\d+\/authorize\?\S+\nWaiting for the browser to come back…\n/);
        assert.equal(loggedIn.stdout.split("\n").at(-2), `Logged in to remote (1 tool); the tokens are in ${ws.tokens}.`);
        const first = stored(ws);
        assert.equal(first.mode, 0o600);
        assert.deepEqual(Object.keys(first.servers), ["remote"]);
        assert.equal(first.servers.remote!.tokens!.access_token, server.issued.at(-1));
        assert.ok(!server.issued.some((secret) => loggedIn.stdout.includes(secret) || loggedIn.stderr.includes(secret)), "no token is printed");

        assert.equal(await initialize(launcher, ws), null);
        server.expireAccessTokens();
        assert.equal(await initialize(launcher, ws), null);
        assert.deepEqual(server.grants, ["authorization_code ok", "refresh_token ok"]);
        const refreshed = stored(ws);
        assert.equal(refreshed.mode, 0o600);
        assert.equal(refreshed.servers.remote!.tokens!.access_token, server.issued.at(-1), "the refreshed token is stored");

        const out = await run(launcher, ws, ["mcp", "logout", "remote"]);
        assert.equal(out.code, 0, out.stderr);
        assert.equal(out.stdout, "Logged out of remote; its tokens are removed.\n");
        assert.deepEqual(stored(ws), { servers: {}, mode: 0o600 });
        const again = await run(launcher, ws, ["mcp", "logout", "remote"]);
        assert.equal(again.code, 1);
        assert.equal(again.stderr, 'magi-code mcp: no stored login for "remote"\n');
      }));

    it("a stored login the server refuses and cannot refresh: initialize answers mcp_unavailable, mcp list says login needed", () =>
      withServer(async (server) => {
        const ws = await approved(launcher, server);
        assert.equal((await login(launcher, ws, "remote")).code, 0);
        server.revokeAll();
        assert.equal(await initialize(launcher, ws), "mcp_unavailable");
        const listed = await run(launcher, ws, ["mcp", "list"]);
        assert.equal(listed.code, 1);
        assert.equal(
          listed.stdout.trimEnd().split("\n").at(-1),
          "remote: fails to start, initialize would answer mcp_unavailable: auth_required, login needed: the server answered 401 and no stored login works; run 'magi-code mcp login remote'",
        );
        assert.deepEqual(server.grants, ["authorization_code ok", "refresh_token refused", "refresh_token refused"], "startup and list each tried the refresh, nothing more");
        assert.equal(stored(ws).servers.remote!.tokens!.access_token, server.issued[0], "the refused login is kept for a new login to replace");
      }));
  });
}
