/**
 * Runs INSIDE the installed overrides fixture (copied next to its node_modules by
 * scripts/setup-h2-overrides-fixture.mjs), as a consumer application would:
 *
 * - scans node_modules for every installed `@smithy/node-http-handler` and reads which package it really is;
 * - constructs KinesisClient, TranscribeStreamingClient and BedrockRuntimeClient with their default HTTP/2 handler
 *   (the generated runtime config calls `NodeHttp2Handler.create(...)`), only adding the test CA for TLS;
 * - runs Kinesis PutRecord and GetRecords over HTTP/2 against a local h2 server (TLS, 127.0.0.1, port 0) that speaks
 *   the Kinesis JSON protocol for those two operations, and Bedrock InvokeModel against the same server;
 * - runs Kinesis SubscribeToShard, an event stream (the SDK passes `isEventStream: true` to the handler), on a client
 *   whose handler pools sessions (`disableConcurrentStreams: false`): the server answers with two
 *   `application/vnd.amazon.eventstream` messages (encoded here by hand: prelude, headers, payload, CRC32s), the
 *   second only after the client read the first, and records which server session carried each stream, so the
 *   output shows the subscription got a session of its own while PutRecord calls before and after it shared one.
 *
 * Prints one JSON line with what it saw. Env: FIXTURE_CA, FIXTURE_KEY (PEM paths).
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import http2 from "node:http2";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const ca = readFileSync(process.env.FIXTURE_CA);
const key = readFileSync(process.env.FIXTURE_KEY);

function findHandlers(dir, found = []) {
  if (!existsSync(dir)) return found;
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const full = join(dir, name);
    if (name.startsWith("@")) {
      for (const sub of readdirSync(full)) {
        const pkgDir = join(full, sub);
        if (`${name}/${sub}` === "@smithy/node-http-handler") {
          found.push({ path: pkgDir, name: JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).name });
        }
        findHandlers(join(pkgDir, "node_modules"), found);
      }
    } else {
      findHandlers(join(full, "node_modules"), found);
    }
  }
  return found;
}

/** CRC32 (IEEE), as the event-stream framing uses it. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One event-stream message: string headers, a JSON payload. */
function eventMessage(headers, payload) {
  const parts = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h[0] = n.length;
    n.copy(h, 1);
    h[1 + n.length] = 7; // string
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    parts.push(h);
  }
  const headerBytes = Buffer.concat(parts);
  const body = Buffer.from(JSON.stringify(payload));
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, headerBytes, body, Buffer.alloc(4)]);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

function shardEvent(data, sequenceNumber) {
  return eventMessage(
    { ":message-type": "event", ":event-type": "SubscribeToShardEvent", ":content-type": "application/json" },
    {
      Records: [
        {
          Data: Buffer.from(data).toString("base64"),
          PartitionKey: "pk",
          SequenceNumber: sequenceNumber,
          ApproximateArrivalTimestamp: 1700000000,
        },
      ],
      ContinuationSequenceNumber: sequenceNumber,
      MillisBehindLatest: 0,
    }
  );
}

const records = [];
const protocols = new Set();
/** Server session (numbered in accept order) of each stream, by operation. */
const sessionIds = new WeakMap();
let sessionsAccepted = 0;
const streamsBySession = [];
/** Resolves the subscription's second event (sent once the client read the first). */
let sendSecondEvent;
const server = http2.createSecureServer({ key, cert: ca, allowHTTP1: false });
server.on("session", (session) => sessionIds.set(session, ++sessionsAccepted));
server.on("stream", (stream, headers) => {
  protocols.add("h2");
  streamsBySession.push([
    String(headers["x-amz-target"] ?? headers[":path"])
      .split(".")
      .pop(),
    sessionIds.get(stream.session),
  ]);
  const chunks = [];
  stream.on("data", (c) => chunks.push(c));
  stream.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    const target = headers["x-amz-target"];
    const path = String(headers[":path"]);
    const reply = (status, json, contentType = "application/x-amz-json-1.1") => {
      stream.respond({ ":status": status, "content-type": contentType, "x-amzn-requestid": "fixture-1" });
      stream.end(JSON.stringify(json));
    };
    if (target === "Kinesis_20131202.PutRecord") {
      const input = JSON.parse(body);
      records.push(input.Data);
      reply(200, { SequenceNumber: String(records.length), ShardId: "shardId-000000000000" });
    } else if (target === "Kinesis_20131202.GetRecords") {
      reply(200, {
        Records: records.map((data, i) => ({
          Data: data,
          PartitionKey: "pk",
          SequenceNumber: String(i + 1),
          ApproximateArrivalTimestamp: 1700000000,
        })),
        NextShardIterator: "iterator-2",
        MillisBehindLatest: 0,
      });
    } else if (target === "Kinesis_20131202.SubscribeToShard") {
      const input = JSON.parse(body);
      stream.respond({
        ":status": 200,
        "content-type": "application/vnd.amazon.eventstream",
        "x-amzn-requestid": "fixture-sub",
      });
      stream.write(shardEvent(`first event of ${input.ShardId}`, "101"));
      sendSecondEvent = () => stream.end(shardEvent("second event", "102"));
    } else if (path.startsWith("/model/") && path.endsWith("/invoke")) {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(JSON.stringify({ echo: JSON.parse(body) }));
    } else {
      reply(400, { __type: "UnknownOperationException", message: `unknown ${target ?? path}` });
    }
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const endpoint = `https://localhost:${server.address().port}`;
const common = {
  region: "us-east-1",
  endpoint,
  credentials: { accessKeyId: "AKIDFIXTURE", secretAccessKey: "fixture-secret" },
  // Options object: the generated runtime config hands it to NodeHttp2Handler.create(), i.e. `new NodeHttp2Handler(...)`.
  requestHandler: { nodeHttp2ConnectOptions: { ca }, disableConcurrentStreams: true, requestTimeout: 10_000 },
};

const out = { handlers: findHandlers(join(process.cwd(), "node_modules")) };
out.resolved = JSON.parse(
  readFileSync(join(require.resolve("@smithy/node-http-handler").split("/dist/")[0], "package.json"), "utf8")
).name;

const { KinesisClient, PutRecordCommand, GetRecordsCommand, SubscribeToShardCommand } = await import(
  "@aws-sdk/client-kinesis"
);
const { TranscribeStreamingClient } = await import("@aws-sdk/client-transcribe-streaming");
const { BedrockRuntimeClient, InvokeModelCommand } = await import("@aws-sdk/client-bedrock-runtime");

const kinesis = new KinesisClient(common);
const transcribe = new TranscribeStreamingClient({ ...common, requestHandler: undefined });
const bedrock = new BedrockRuntimeClient(common);
const describe = (client) => {
  const h = client.config.requestHandler;
  return {
    constructor: h?.constructor?.name,
    protocol: h?.metadata?.handlerProtocol,
    sockeye: typeof h?.getPoolStats === "function",
  };
};
out.clients = { kinesis: describe(kinesis), transcribe: describe(transcribe), bedrock: describe(bedrock) };

const put1 = await kinesis.send(
  new PutRecordCommand({ StreamName: "s", PartitionKey: "pk", Data: new TextEncoder().encode("hello-h2") })
);
const put2 = await kinesis.send(
  new PutRecordCommand({ StreamName: "s", PartitionKey: "pk", Data: new TextEncoder().encode("second") })
);
const got = await kinesis.send(new GetRecordsCommand({ ShardIterator: "iterator-1" }));
out.kinesis = {
  sequenceNumbers: [put1.SequenceNumber, put2.SequenceNumber],
  records: (got.Records ?? []).map((r) => new TextDecoder().decode(r.Data)),
  stats: kinesis.config.requestHandler.getPoolStats().origins.map((o) => ({
    origin: o.origin,
    started: o.requests.started,
    completed: o.requests.completed,
    sessionsCreated: o.http2?.sessionsCreated,
    closedLocal: o.http2?.closed.local,
  })),
};
const invoked = await bedrock.send(
  new InvokeModelCommand({ modelId: "test-model", contentType: "application/json", body: JSON.stringify({ q: 1 }) })
);
out.bedrock = JSON.parse(new TextDecoder().decode(invoked.body));

// An event stream through the SDK on a handler that pools sessions: PutRecord, SubscribeToShard, PutRecord.
const pooled = new KinesisClient({
  ...common,
  requestHandler: { nodeHttp2ConnectOptions: { ca }, disableConcurrentStreams: false, requestTimeout: 10_000 },
});
const pooledHandler = pooled.config.requestHandler;
streamsBySession.length = 0;
await pooled.send(new PutRecordCommand({ StreamName: "s", PartitionKey: "pk", Data: new TextEncoder().encode("p1") }));
const subscription = await pooled.send(
  new SubscribeToShardCommand({
    ConsumerARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/c:1",
    ShardId: "shardId-000000000000",
    StartingPosition: { Type: "TRIM_HORIZON" },
  })
);
const events = [];
let duringSubscription;
for await (const event of subscription.EventStream) {
  const e = event.SubscribeToShardEvent;
  events.push({
    continuation: e?.ContinuationSequenceNumber,
    records: (e?.Records ?? []).map((r) => new TextDecoder().decode(r.Data)),
  });
  if (events.length === 1) {
    const o = pooledHandler.getPoolStats().origins[0];
    duringSubscription = { sessionsOpen: o.http2.sessionsOpen, isolatedSessionsOpen: o.http2.isolatedSessionsOpen };
    sendSecondEvent();
  }
}
await pooled.send(new PutRecordCommand({ StreamName: "s", PartitionKey: "pk", Data: new TextEncoder().encode("p2") }));
const pooledOrigin = pooledHandler.getPoolStats().origins[0];
out.subscribe = {
  events,
  duringSubscription,
  streamsBySession: [...streamsBySession],
  after: {
    sessionsCreated: pooledOrigin.http2.sessionsCreated,
    sessionsOpen: pooledOrigin.http2.sessionsOpen,
    isolatedSessionsOpen: pooledOrigin.http2.isolatedSessionsOpen,
    closedLocal: pooledOrigin.http2.closed.local,
    started: pooledOrigin.requests.started,
    failed: pooledOrigin.requests.failed,
  },
};
pooled.destroy();
out.protocols = [...protocols];

kinesis.destroy();
transcribe.destroy();
bedrock.destroy();
server.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
