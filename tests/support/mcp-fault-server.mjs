#!/usr/bin/env node
// A small MCP server over stdio that misbehaves on purpose, for the
// connection layer's fault tests. It speaks newline-delimited JSON-RPC by
// hand (no SDK), so each fault is exactly what it says:
//
//   node mcp-fault-server.mjs <mode> [record-file]
//
// Modes: well (a good server: `echo`, `slow`, `crash`, `big`, `grow`, `env`),
// exit-handshake, silent, stderr-flood, huge-schema, invalid-schema,
// collide, paged, many-pages, heavy-pages, slow-pages (well, whose list after
// `grow` is two pages 700 ms late each), rename (one tool `a.b`, which when called
// says the list changed and is replaced by `a_b`, exposed under the same name), stubborn (ignores stdin EOF and SIGTERM, and keeps a
// grandchild in its group that does too). `record-file`, when given, gets
// its own pid as `pid <pid>`, then one line per message received (its
// method, or "response"), and the pid of any grandchild as `grandchild <pid>`.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [mode = "well", record] = process.argv.slice(2);
const note = (line) => record !== undefined && appendFileSync(record, `${line}\n`);
note(`pid ${process.pid}`);
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);

const object = (properties = {}) => ({ type: "object", properties });
const TOOLS = {
  well: [
    { name: "echo", description: "Echoes its text.", inputSchema: object({ text: { type: "string" } }) },
    { name: "slow", description: "Never answers, and ignores cancellation.", inputSchema: object() },
    { name: "crash", description: "Exits while answering.", inputSchema: object() },
    { name: "big", description: "Answers with 10 MiB of text.", inputSchema: object() },
    { name: "grow", description: "Adds a tool and says the list changed.", inputSchema: object() },
    { name: "env", description: "Answers with the value of its environment variable `name`.", inputSchema: object({ name: { type: "string" } }) },
  ],
  "huge-schema": [{ name: "huge", inputSchema: object({ field: { type: "string", description: "x".repeat(70 * 1024) } }) }],
  "invalid-schema": [{ name: "wrong", inputSchema: { type: "array" } }],
  collide: [{ name: "a.b", inputSchema: object() }, { name: "a_b", inputSchema: object() }],
  rename: [{ name: "a.b", inputSchema: object() }],
};
let grown = false;
let renamed = false;

function tools() {
  if (renamed) return [{ name: "a_b", inputSchema: object() }];
  const listed = TOOLS[mode] ?? TOOLS.well;
  return grown ? [...listed, { name: "grown", description: "Added later.", inputSchema: object() }] : listed;
}

// many-pages: 32 pages of 100 tools each; heavy-pages: 32 pages of one tool with a 60 KiB schema each.
function endlessPage(page) {
  if (mode === "many-pages") return Array.from({ length: 100 }, (_, index) => ({ name: `t${page}_${index}`, inputSchema: object() }));
  return [{ name: `heavy${page}`, inputSchema: object({ field: { type: "string", description: "x".repeat(60 * 1024) } }) }];
}

function list(id, params) {
  if (mode === "many-pages" || mode === "heavy-pages") {
    const page = Number(params?.cursor ?? "0");
    return send({ id, result: { tools: endlessPage(page), ...(page < 31 ? { nextCursor: String(page + 1) } : {}) } });
  }
  if (mode === "slow-pages" && grown) {
    // After `grow`: two pages, each 700 ms late.
    const page = Number(params?.cursor ?? "0");
    const result = page === 0 ? { tools: tools().slice(0, 3), nextCursor: "1" } : { tools: tools().slice(3) };
    return setTimeout(() => send({ id, result }), 700);
  }
  if (mode !== "paged") return send({ id, result: { tools: tools() } });
  // Three pages of one tool each.
  const page = Number(params?.cursor ?? "0");
  const result = { tools: [{ name: `page${page}`, inputSchema: object() }] };
  send({ id, result: page < 2 ? { ...result, nextCursor: String(page + 1) } : result });
}

function call(id, params) {
  switch (params.name) {
    case "echo":
      return send({ id, result: { content: [{ type: "text", text: `echo: ${params.arguments?.text ?? ""}` }] } });
    case "slow":
      return;
    case "crash":
      process.exit(7);
      return;
    case "big":
      return send({ id, result: { content: [{ type: "text", text: "y".repeat(10 * 1024 * 1024) }] } });
    case "env":
      return send({ id, result: { content: [{ type: "text", text: `value: ${process.env[params.arguments?.name] ?? ""}` }] } });
    case "a.b":
      if (mode === "rename" && !renamed) {
        renamed = true;
        send({ method: "notifications/tools/list_changed" });
      }
      return send({ id, result: { content: [{ type: "text", text: "a.b ran" }] } });
    case "a_b":
      return send({ id, result: { content: [{ type: "text", text: "a_b ran" }] } });
    case "grow":
      grown = true;
      send({ method: "notifications/tools/list_changed" });
      return send({ id, result: { content: [{ type: "text", text: "grown" }] } });
    default:
      return send({ id, error: { code: -32602, message: `Unknown tool ${params.name}` } });
  }
}

function handle(message) {
  note(message.method ?? "response");
  if (message.id === undefined || message.method === undefined) return;
  if (mode === "exit-handshake") process.exit(3);
  if (mode === "silent") return;
  switch (message.method) {
    case "initialize":
      return send({
        id: message.id,
        result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "fault", version: "1.0.0" } },
      });
    case "tools/list":
      return list(message.id, message.params);
    case "tools/call":
      return call(message.id, message.params);
    case "ping":
      return send({ id: message.id, result: {} });
    default:
      return send({ id: message.id, error: { code: -32601, message: "Method not found" } });
  }
}

if (mode === "stderr-flood") {
  // Far more than a pipe holds: a server whose stderr is not drained blocks here.
  const line = `${"noise ".repeat(170)}\n`;
  for (let index = 0; index < 2000; index++) process.stderr.write(line);
}
if (mode === "stubborn") {
  process.on("SIGTERM", () => {});
  const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
  note(`grandchild ${child.pid}`);
  setInterval(() => {}, 1000);
}

let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (line.trim() !== "") handle(JSON.parse(line));
  }
});
// A stubborn server outlives its stdin; the others end with it, as MCP stdio servers should.
process.stdin.on("end", () => mode !== "stubborn" && process.exit(0));
