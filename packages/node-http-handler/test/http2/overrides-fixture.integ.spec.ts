/**
 * Wholesale replacement through npm `overrides`: a fixture project (NOT a workspace; installed from scratch into
 * `.cache/h2-overrides-fixture` by scripts/setup-h2-overrides-fixture.mjs from the registry plus the packed, built
 * Sockeye packages) maps `@smithy/node-http-handler` to `@sockeye/node-http-handler`. Real generated clients
 * (Kinesis, Transcribe Streaming, Bedrock Runtime) must construct with Sockeye's `NodeHttp2Handler`, Kinesis
 * PutRecord/GetRecords and Bedrock InvokeModel must complete over HTTP/2 against a local h2 server, Kinesis
 * SubscribeToShard (an event stream: the SDK passes `isEventStream: true`) must deliver the server's event-stream
 * messages on a session of its own, and every `@smithy/node-http-handler` installed in the fixture's tree must be
 * Sockeye.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..", "..", "..");
const TARGET = join(ROOT, ".cache", "h2-overrides-fixture");
const FIXTURES = join(__dirname, "..", "fixtures");

interface FixtureOutput {
  handlers: { path: string; name: string }[];
  resolved: string;
  clients: Record<string, { constructor: string; protocol: string; sockeye: boolean }>;
  kinesis: { sequenceNumbers: string[]; records: string[]; stats: { origin: string; started: number }[] };
  bedrock: unknown;
  subscribe: {
    events: { continuation: string; records: string[] }[];
    duringSubscription: { sessionsOpen: number; isolatedSessionsOpen: number };
    streamsBySession: [string, number][];
    after: Record<string, number>;
  };
  protocols: string[];
}

let output: FixtureOutput;

describe("npm overrides: @smithy/node-http-handler → @sockeye/node-http-handler", () => {
  beforeAll(() => {
    const setup = spawnSync(process.execPath, [join(ROOT, "scripts", "setup-h2-overrides-fixture.mjs")], {
      encoding: "utf8",
      timeout: 280_000,
    });
    if (setup.status !== 0) throw new Error(`fixture setup failed: ${setup.stderr || setup.stdout || setup.error}`);
    const run = spawnSync(process.execPath, ["run-clients.mjs"], {
      cwd: TARGET,
      encoding: "utf8",
      timeout: 60_000,
      env: {
        ...process.env,
        FIXTURE_CA: join(FIXTURES, "localhost-cert.pem"),
        FIXTURE_KEY: join(FIXTURES, "localhost-key.pem"),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      },
    });
    if (run.status !== 0) throw new Error(`run-clients.mjs failed (${run.status}): ${run.stderr}`);
    const lines = run.stdout.trim().split("\n");
    output = JSON.parse(lines[lines.length - 1]);
  }, 300_000);

  it("every @smithy/node-http-handler in the fixture's tree is Sockeye", () => {
    expect(output.handlers.length).toBeGreaterThanOrEqual(1);
    for (const h of output.handlers) expect(h.name).toBe("@sockeye/node-http-handler");
    expect(output.resolved).toBe("@sockeye/node-http-handler");
  });

  it("Kinesis, Transcribe Streaming and Bedrock Runtime construct with Sockeye's NodeHttp2Handler", () => {
    for (const name of ["kinesis", "transcribe", "bedrock"]) {
      expect(output.clients[name]).toEqual({ constructor: "NodeHttp2Handler", protocol: "h2", sockeye: true });
    }
  });

  it("Kinesis PutRecord/GetRecords and Bedrock InvokeModel complete over HTTP/2", () => {
    expect(output.protocols).toEqual(["h2"]);
    expect(output.kinesis.sequenceNumbers).toEqual(["1", "2"]);
    expect(output.kinesis.records).toEqual(["hello-h2", "second"]);
    expect(output.kinesis.stats[0].origin).toMatch(/^https:\/\/localhost:\d+$/);
    expect(output.kinesis.stats[0].started).toBe(3);
    expect(output.bedrock).toEqual({ echo: { q: 1 } });
  });

  it("Kinesis SubscribeToShard streams its events through the SDK on an isolated event-stream session", () => {
    const sub = output.subscribe;
    expect(sub.events).toEqual([
      { continuation: "101", records: ["first event of shardId-000000000000"] },
      { continuation: "102", records: ["second event"] },
    ]);
    // While the subscription streamed: the pooled session (PutRecord) and the subscription's own session were open.
    expect(sub.duringSubscription).toEqual({ sessionsOpen: 1, isolatedSessionsOpen: 1 });
    // PutRecord before and after share the pooled session; the subscription ran on another one.
    const [[op1, s1], [op2, s2], [op3, s3]] = sub.streamsBySession;
    expect([op1, op2, op3]).toEqual(["PutRecord", "SubscribeToShard", "PutRecord"]);
    expect(s3).toBe(s1);
    expect(s2).not.toBe(s1);
    expect(sub.streamsBySession).toHaveLength(3);
    // The event-stream session was closed by the handler once its stream ended; the pooled one stays open.
    expect(sub.after).toEqual({
      sessionsCreated: 2,
      sessionsOpen: 1,
      isolatedSessionsOpen: 0,
      closedLocal: 1,
      started: 3,
      failed: 0,
    });
  });
});
