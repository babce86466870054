// =============================================================================
// frame-category.mjs: which part of the stack a V8 call frame belongs to, by its source URL and function name.
// Shared by the CPU profiles (profile.mjs) and the allocation profiles (bench-alloc.mjs), so both group the same
// way: node timers, node http client, net/streams/events, Sockeye, Smithy, undici, harness, GC, idle/program.
// =============================================================================

/**
 * Category of a call frame (`{ url, functionName }` as in a `.cpuprofile` or a sampling heap profile).
 * @param {{ url?: string, functionName: string }} frame
 * @returns {string}
 */
export function frameCategory(frame) {
  const u = frame.url || "";
  const fn = frame.functionName;
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)") return "idle";
  if (fn === "(program)") return "(program: native, not attributed)";
  if (/node:internal\/timers|node:timers/.test(u)) return "node timers";
  if (/node:_http_|node:http$/.test(u)) return "node http client (_http_*)";
  if (/node:net|node:internal\/stream_base|node:internal\/streams|node:stream|node:events/.test(u))
    return "net, streams, events";
  if (
    /node:internal\/async_hooks|node:async_hooks|node:internal\/process\/task_queues|node:internal\/process\/promises/.test(
      u
    )
  )
    return "async hooks, microtasks, promises";
  if (/pool-monitor\/dist/.test(u)) return "Sockeye (@sockeye/pool-monitor)";
  // Before the undici rule: the workspace package resolves to packages/undici-http-handler/dist.
  if (/packages\/undici-http-handler\/dist|@sockeye\/undici-http-handler/.test(u))
    return "Sockeye (@sockeye/undici-http-handler)";
  if (/node-http-handler\/dist|@sockeye/.test(u) && !/@smithy/.test(u)) return "Sockeye (@sockeye/node-http-handler)";
  if (/@smithy/.test(u)) return "Smithy (@smithy/*)";
  if (/undici/.test(u)) return "undici";
  if (/packages\/bench\/src/.test(u)) return "bench harness";
  if (u.startsWith("node:")) return "other node internals";
  if (u === "") return "native / builtins (no URL)";
  return "other";
}

/** A frame's location, shortened for tables: `packages/...` or the path inside `node_modules`. */
export function shortLocation(frame) {
  const short = (frame.url || "").replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/packages\//, "packages/");
  return `${short}:${frame.lineNumber + 1}`;
}
