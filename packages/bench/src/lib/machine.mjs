// =============================================================================
// machine.mjs: describe the machine and the run for result files and docs.
// =============================================================================

import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

function versionOf(pkg) {
  try {
    return require(`${pkg}/package.json`).version;
  } catch {
    return "unavailable";
  }
}

/** @param {string} command the exact command a reader runs to reproduce */
export function describeRun(command) {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    date: new Date().toISOString(),
    command,
    execArgv: process.execArgv,
    versions: {
      "@smithy/node-http-handler": versionOf("@smithy/node-http-handler"),
      "@sockeye/node-http-handler": versionOf("@sockeye/node-http-handler"),
      "@smithy/undici-http-handler": versionOf("@smithy/undici-http-handler"),
      "@sockeye/undici-http-handler": versionOf("@sockeye/undici-http-handler"),
      undici: versionOf("undici"),
    },
  };
}
