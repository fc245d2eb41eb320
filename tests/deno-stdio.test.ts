/**
 * The Deno launch check's stdio classifier (`runtime/deno-stdio.ts`) on real
 * descriptors, through each of its three ways: the descriptor's own path
 * (what `--allow-all` permits), `/bin/sh` (the narrow permission set the
 * README's spawn line gives), and `node:fs` (the narrow set where the shell
 * is missing). Each must tell socketpairs, pipes, files, devices and a TCP
 * socket apart as the launch check needs; without `/proc` access a socket
 * reads as a socketpair, as it always did on Deno.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import { SERVE_FLAGS } from "../runtime/permissions.ts";
import { guarded } from "./support/hang-guard.ts";
import { collect, denoBinary, repoRoot } from "./support/processes.ts";

const root = mkdtempSync(join(tmpdir(), "magi-deno-stdio-"));
after(() => rmSync(root, { recursive: true, force: true }));

// The classifier alone, run by the Deno under test: it prints on stderr what it says of fds 0 and 1
// and whether it touched the global `process`, the way into Deno's Node-compat layer.
const script = join(root, "kinds.ts");
writeFileSync(script, [
  "let compat = false;",
  'const real = Object.getOwnPropertyDescriptor(globalThis, "process")!;',
  'Object.defineProperty(globalThis, "process", { configurable: true, get: () => ((compat = true), real.get!.call(globalThis)) });',
  `const { createStdioKinds } = await import(${JSON.stringify(pathToFileURL(join(repoRoot(), "runtime", "deno-stdio.ts")).href)});`,
  "const kind = createStdioKinds(...Deno.args);",
  "const kinds = [await kind(0), await kind(1)];",
  "Deno.stderr.writeSync(new TextEncoder().encode(JSON.stringify({ kinds, compat })));",
  "",
].join("\n"));

// What `stdio: "pipe"` makes: socketpairs under Node (libuv), anonymous pipes under Deno.
const childPipe = "Deno" in globalThis ? "fifo" : "socketpair";

const ways = [
  { name: "the descriptor's path (--allow-all)", flags: ["--allow-all"], args: [], socket: "socket", compat: false },
  { name: "/bin/sh (the narrow set)", flags: [...SERVE_FLAGS], args: [], socket: "socketpair", compat: false },
  { name: "node:fs (the narrow set, no shell)", flags: [...SERVE_FLAGS], args: [join(root, "no-such-shell")], socket: "socketpair", compat: true },
] as const;

/** Runs the classifier under `flags` with `stdio`, or through `shell` (a bash script ending in `"$@"`). */
async function kinds(way: (typeof ways)[number], stdio: [unknown, unknown] | { shell: string }): Promise<unknown> {
  const command = [denoBinary(), "run", ...way.flags, "--quiet", script, ...way.args];
  const child = "shell" in stdio
    ? spawn("bash", ["-c", stdio.shell, "bash", ...command], { stdio: ["ignore", "ignore", "pipe"] })
    : spawn(command[0]!, command.slice(1), { stdio: [...stdio, "pipe"] as never });
  const [text, code] = await guarded(Promise.all([collect(child.stderr), new Promise((resolve) => child.once("exit", resolve))]), "the classifier");
  assert.equal(code, 0, text);
  const { kinds, compat } = JSON.parse(text) as { kinds: unknown; compat: boolean };
  assert.equal(compat, way.compat, way.compat ? "only the last way loads node:fs" : "the Node-compat layer stayed unloaded");
  return kinds;
}

describe("runtime/deno-stdio.ts", () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((socket) => socket.on("error", () => {}));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  after(() => server.close());

  for (const way of ways) {
    it(`${way.name}: the test runtime's child stdio (socketpairs under Node) is served`, async () => {
      assert.deepEqual(await kinds(way, ["pipe", "pipe"]), [childPipe, childPipe]);
    });

    it(`${way.name}: anonymous pipes are FIFOs`, async () => {
      assert.deepEqual(await kinds(way, { shell: ': | "$@" | cat' }), ["fifo", "fifo"]);
    });

    it(`${way.name}: a regular file in and out is a file, /dev/null a device`, async () => {
      const file = join(root, "input.jsonl");
      writeFileSync(file, "{}\n");
      const input = openSync(file, "r");
      const output = openSync(join(root, "output.jsonl"), "w");
      const devNull = openSync("/dev/null", "r");
      try {
        assert.deepEqual(await kinds(way, [input, output]), ["file", "file"]);
        assert.deepEqual(await kinds(way, [devNull, "pipe"]), ["device", childPipe]);
      } finally {
        for (const fd of [input, output, devNull]) closeSync(fd);
      }
    });

    it(`${way.name}: a TCP socket on stdin is ${way.socket === "socket" ? "a socket" : "taken for a socketpair"}`, async () => {
      assert.deepEqual(await kinds(way, { shell: `exec 3<>/dev/tcp/127.0.0.1/${port}; "$@" <&3 | cat` }), [way.socket, "fifo"]);
    });
  }
});
