// Telemetry for your own node:http agent, without a Sockeye handler: a local server, one request, the pool's stats.
// Run: node standalone.mjs
import http from "node:http";
import { PoolMonitor } from "@sockeye/pool-monitor";

const server = http.createServer((_request, response) => response.end("ok")).listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
const monitor = new PoolMonitor({
  logger: console,
  onSaturation: (report) => console.warn("saturated:", report.origin),
});
monitor.start(); // standalone: a lazy, unref'd interval that exists only while requests are in flight

await new Promise((resolve, reject) => {
  const startedAt = performance.now();
  const req = http.request(`${origin}/x`, { agent }, (res) => res.resume().on("end", resolve));
  monitor.trackRequest(req, agent, origin, startedAt); // right after http.request()
  req.on("error", reject);
  req.end();
});

const [stats] = monitor.getStats().origins;
console.log(`pool ${stats.origin}: active ${stats.active}, idle ${stats.idle}, completed ${stats.requests.completed}`);
monitor.destroy();
agent.destroy();
server.close();
