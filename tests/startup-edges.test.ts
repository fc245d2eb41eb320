import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRuntime, ManualClock } from "../runtime/memory.ts";
import { main } from "../src/cli.ts";
import { resolveHome } from "../src/admission/startup.ts";
import { classifySocket, classifyUnixSocket } from "../src/util/stdio-kind.ts";
import { guarded } from "./support/hang-guard.ts";
import { initLine, startServer } from "./support/harness.ts";

async function initialize(run: ReturnType<typeof startServer>) {
  run.runtime.input.push(initLine("i1"));
  const [frame] = await run.waitFrames(1);
  run.runtime.input.end();
  await run.exit;
  return frame!;
}

describe("startup edge cases", () => {
  it("a client started in $HOME reads the global settings once, not again as project settings", async () => {
    const run = startServer({ cwd: "/home/user", env: { OPENAI_API_KEY: "sk-test-0123456789abcdef0123" } });
    run.runtime.fs.writeFile(
      "/home/user/.magi-code/settings.jsonc",
      '{ "model": { "provider": "openai" }, "providers": { "endpoints": { "openai": { "base_url": "https://proxy.example/v1" } } } }',
    );
    const frame = await initialize(run);
    assert.equal((frame.result!.status as Record<string, unknown>).provider, "openai");
  });

  it("an MC_HOME that is a regular file or a dangling symlink is configuration_invalid", async () => {
    for (const arrange of [
      (run: ReturnType<typeof startServer>) => run.runtime.fs.writeFile("/data/home", "not a directory"),
      (run: ReturnType<typeof startServer>) => run.runtime.fs.symlink("/nowhere", "/data/home"),
      (run: ReturnType<typeof startServer>) => run.runtime.fs.writeFile("/data", "a file in the parent chain"),
    ]) {
      const run = startServer({ env: { MC_HOME: "/data/home" } });
      arrange(run);
      assert.equal((await initialize(run)).error?.code, "configuration_invalid");
    }
  });

  it("an MC_HOME whose sessions directory cannot be created is startup_failed", async () => {
    const run = startServer({ env: { MC_HOME: "/data/home" } });
    run.runtime.fs.faults.set("/data/home/sessions", "io");
    assert.equal((await initialize(run)).error?.code, "startup_failed");
  });

  it("resolveHome() keeps MC_HOME as given so the filesystem resolves .. after a symlink", () => {
    const env = (values: Record<string, string>) => (name: string) => values[name];
    assert.equal(resolveHome(env({ MC_HOME: "/tmp/link/../store/" })), "/tmp/link/../store");
    assert.equal(resolveHome(env({ MC_HOME: "relative" })), null);
    assert.equal(resolveHome(env({ HOME: "/home/u/" })), "/home/u/.magi-code");
    assert.equal(resolveHome(env({})), null);
  });
});

describe("launch edge cases", () => {
  it("an invalid launch exits 2 even when stderr never drains: it waits 100 ms of its clock, not for the pipe", async () => {
    const clock = new ManualClock();
    const runtime = createMemoryRuntime({ args: ["bogus"], clock });
    runtime.errors.stall();
    let code: number | null = null;
    const exited = main(runtime).then((value) => (code = value));
    const turns = async () => {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    };
    await turns();
    clock.advance(99);
    await turns();
    assert.equal(code, null, "still waiting for stderr before 100 ms");
    clock.advance(1);
    await guarded(exited, "main() after its stderr wait");
    assert.equal(code, 2);
  });
});

describe("launch check order", () => {
  for (const [stdin, asked] of [["tty", [0]], ["file", [0]], ["fifo", [0, 1]]] as const) {
    it(`serve --stdio with a ${stdin} stdin asks stdout's kind ${asked.length === 1 ? "never: a refused stdin costs no second look" : "next"}`, async () => {
      const runtime = createMemoryRuntime({ stdio: [stdin, "device", "fifo"] });
      const seen: number[] = [];
      const kindOf = runtime.stdioKind;
      runtime.stdioKind = (fd) => (seen.push(fd), kindOf(fd));
      assert.equal(await main(runtime), 2);
      assert.deepEqual(seen, asked);
    });
  }
});

describe("stdio socket classification", () => {
  const header = "Num       RefCount Protocol Flags    Type St Inode Path\n";
  const unix = header +
    "0000000000000000: 00000003 00000000 00000000 0001 03 111\n" +
    "0000000000000000: 00000003 00000000 00000000 0002 03 222\n" +
    "0000000000000000: 00000003 00000000 00000000 0005 03 333\n" +
    "0000000000000000: 00000002 00000000 00010000 0001 01 444 /run/some.sock\n";
  const tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0\n";

  it("classifyUnixSocket() serves only unnamed stream sockets", () => {
    assert.equal(classifyUnixSocket(unix, "111"), "socketpair");
    assert.equal(classifyUnixSocket(unix, "222"), "socket", "a datagram pair loses boundaries");
    assert.equal(classifyUnixSocket(unix, "333"), "socket", "a seqpacket pair can drop writes");
    assert.equal(classifyUnixSocket(unix, "444"), "socket", "a socket bound to a path");
    assert.equal(classifyUnixSocket(unix, "999"), null);
  });

  it("classifySocket() refuses inet sockets and serves sockets of another network namespace", () => {
    const tables = (name: string) => (name === "unix" ? unix : name === "tcp" ? tcp : "");
    assert.equal(classifySocket(tables, "111"), "socketpair");
    assert.equal(classifySocket(tables, "555"), "socket");
    assert.equal(classifySocket(tables, "777"), "socketpair");
  });
});
