/**
 * A TCP listener on 127.0.0.1 that never accepts: a child Node process listens with backlog 1 (0 would mean the default) and then blocks its
 * own thread (`Atomics.wait`, no CPU), so the kernel's accept queue fills after a couple of connections and every
 * later SYN is dropped: `connect()` to it stays pending. Test helper (`*.mock.ts`): not part of the build.
 */
import { spawn } from "node:child_process";
import net from "node:net";

const CHILD = `
const net = require("node:net");
const server = net.createServer();
server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
  process.stdout.write(String(server.address().port) + "\\n", () => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  });
});
`;

export interface BlackHole {
  port: number;
  close(): void;
}

export async function startBlackHole(): Promise<BlackHole> {
  const child = spawn(process.execPath, ["-e", CHILD], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (d) => resolve(Number(String(d).trim())));
    child.once("error", reject);
  });
  // Fill the accept queue: these complete the handshake (the kernel's, nobody accepts); later SYNs are dropped.
  const fillers: net.Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    fillers.push(s);
  }
  await new Promise<void>((resolve) => {
    let pending = fillers.length;
    const done = () => {
      if (--pending === 0) resolve();
    };
    for (const s of fillers) {
      s.once("connect", done);
      // A dropped SYN leaves a filler connecting: give it a moment, it is filling nothing then.
      setTimeout(done, 300).unref();
    }
  });
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      child.kill("SIGKILL");
    },
  };
}
