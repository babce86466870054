// =============================================================================
// profile.mjs: CPU-profile ONE client in ONE cell and summarise where time goes.
//
//   npm run --workspace @sockeye/bench bench:profile -- <client> [c=50] [body=128] [timeouts=on] [seconds=6]
//   e.g. ... bench:profile -- sockeye-interval 1000 128 on
//
// How: the script re-runs itself as a child under `node --cpu-prof` (the load
// server is forked from that child with a clean execArgv, so it is not profiled).
// The child warms the client up, then runs bursts for `seconds`. The parent then
// reads the .cpuprofile, attributes every sample's time to the function it was
// in (self time) and groups functions into categories by source URL:
// node timers, node http client, net/streams, Sockeye, Smithy, undici, harness,
// GC, idle/program. Output: out/profiles/<client>-c<c>-<body>-<timeouts>.cpuprofile
// and .summary.json (picked up by report.mjs).
// BENCH_PROFILE_INTERVAL_US sets the sampling interval (node's --cpu-prof-interval,
// default 1000 µs); a finer one resolves sub-microsecond per-request costs in a diff.
// =============================================================================

import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { frameCategory, shortLocation } from "./lib/frame-category.mjs";

const OUT_DIR = fileURLToPath(new URL("../out/profiles/", import.meta.url));
const SELF = fileURLToPath(import.meta.url);

const [client = "sockeye-interval", c = "50", body = "128", timeouts = "on", seconds = "6"] = process.argv.slice(2);
const tag = `${client}-c${c}-${body}-${timeouts}`;

// -----------------------------------------------------------------------------
// Child: run the workload under --cpu-prof
// -----------------------------------------------------------------------------
if (process.env.SOCKEYE_PROFILE_CHILD === "1") {
  const { startLoadServer } = await import("./lib/server-control.mjs");
  const { createClients } = await import("./lib/clients.mjs");
  const { runBurst } = await import("./lib/burst.mjs");
  const server = await startLoadServer();
  const { clients, skipped } = await createClients(server.origin, { timeouts: timeouts === "on", only: [client] });
  if (clients.length === 0) {
    console.error(`cannot profile ${client}: ${skipped[client] ?? "unknown client"}`);
    await server.close();
    process.exit(2);
  }
  const cl = clients[0];
  const conc = Number(c);
  const n = Math.max(conc, 2000);
  const path = `/${body}`;
  await runBurst(cl, { n, c: conc, path });
  let requests = 0;
  let cpuUs = 0;
  const until = performance.now() + Number(seconds) * 1000;
  while (performance.now() < until) {
    const r = await runBurst(cl, { n, c: conc, path });
    requests += n;
    cpuUs += r.cpuUsPerReq * n;
  }
  await cl.close();
  await server.close();
  writeFileSync(`${OUT_DIR}${tag}.run.json`, JSON.stringify({ requests, cpuUsPerReq: cpuUs / requests }));
  process.exit(0);
}

// -----------------------------------------------------------------------------
// Parent: spawn the child, then summarise the profile
// -----------------------------------------------------------------------------
mkdirSync(OUT_DIR, { recursive: true });
const tmpDir = `${OUT_DIR}tmp-${process.pid}/`;
mkdirSync(tmpDir, { recursive: true });
const res = spawnSync(
  process.execPath,
  [
    "--cpu-prof",
    `--cpu-prof-dir=${tmpDir}`,
    ...(process.env.BENCH_PROFILE_INTERVAL_US ? [`--cpu-prof-interval=${process.env.BENCH_PROFILE_INTERVAL_US}`] : []),
    SELF,
    client,
    c,
    body,
    timeouts,
    seconds,
  ],
  {
    stdio: "inherit",
    env: { ...process.env, SOCKEYE_PROFILE_CHILD: "1" },
  }
);
if (res.status !== 0) process.exit(res.status ?? 1);
const file = readdirSync(tmpDir).find((f) => f.endsWith(".cpuprofile"));
const profilePath = `${OUT_DIR}${tag}.cpuprofile`;
renameSync(tmpDir + file, profilePath);
rmSync(tmpDir, { recursive: true, force: true });
const run = JSON.parse(readFileSync(`${OUT_DIR}${tag}.run.json`, "utf8"));
rmSync(`${OUT_DIR}${tag}.run.json`);

const summary = summarise(JSON.parse(readFileSync(profilePath, "utf8")));
const out = { client, c: Number(c), body: Number(body), timeouts, ...run, ...summary };
writeFileSync(`${OUT_DIR}${tag}.summary.json`, JSON.stringify(out, null, 2));
console.log(`profile: ${profilePath}`);
console.log(`${tag}: ${run.requests} requests, ${run.cpuUsPerReq.toFixed(1)} µs CPU/request`);
for (const cat of summary.categories) console.log(`  ${cat.name.padEnd(40)} ${cat.percent.toFixed(1).padStart(5)} %`);
console.log("  top functions:");
for (const t of summary.top.slice(0, 15))
  console.log(`  ${t.percent.toFixed(1).padStart(5)} %  ${t.functionName || "(anonymous)"}  ${t.location}`);

// -----------------------------------------------------------------------------
// Profile summary
// -----------------------------------------------------------------------------
function summarise(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  }
  const cats = new Map();
  const funcs = new Map();
  for (const [id, t] of self) {
    const frame = byId.get(id).callFrame;
    const cat = frameCategory(frame);
    cats.set(cat, (cats.get(cat) ?? 0) + t);
    const key = `${frame.functionName}\u0000${shortLocation(frame)}`;
    funcs.set(key, (funcs.get(key) ?? 0) + t);
  }
  const busy = total - (cats.get("idle") ?? 0);
  const percent = (t) => (100 * t) / busy;
  return {
    note: "self time as % of non-idle samples",
    categories: [...cats]
      .filter(([name]) => name !== "idle")
      .map(([name, t]) => ({ name, percent: percent(t) }))
      .sort((a, b) => b.percent - a.percent),
    top: [...funcs]
      .map(([k, t]) => {
        const [functionName, location] = k.split("\u0000");
        return { functionName, location, percent: percent(t) };
      })
      .filter((x) => x.functionName !== "(idle)")
      .sort((a, b) => b.percent - a.percent)
      .slice(0, 25),
  };
}
