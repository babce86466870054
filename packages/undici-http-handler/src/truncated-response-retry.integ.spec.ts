/**
 * A response cut short mid-body (a `Connection: close` response ended by FIN, a keep-alive one reset) through a real
 * DynamoDB client with the default retry strategy, over http and https on 127.0.0.1: UndiciHttpHandler is retried
 * exactly as Sockeye's NodeHttpHandler and @smithy/node-http-handler (the same number of attempts, counted at the
 * server), and the final error has the same `code`. Before the fix undici's `UND_ERR_RES_CONTENT_LENGTH_MISMATCH`
 * (FIN) was not retried at all.
 */
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { NodeHttpHandler as SmithyNodeHttpHandler } from "@smithy/node-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CA, waitFor } from "../../node-http-handler/test/servers";
import { type BodyFaultServer, startBodyFaultServer } from "./body-fault-server.mock";
import { UndiciHttpHandler } from "./undici-http-handler";

const quiet = { debug() {}, info() {}, error() {}, trace() {}, warn() {} };
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);
beforeAll(() => {
  process.on("uncaughtException", onUncaught);
});
afterAll(() => {
  process.off("uncaughtException", onUncaught);
});

for (const kind of ["http", "https"] as const) {
  describe(`a truncated response through DynamoDB's retry strategy, over ${kind}`, () => {
    let server: BodyFaultServer;
    const clients: DynamoDBClient[] = [];
    beforeAll(async () => {
      server = await startBodyFaultServer(kind);
    });
    afterEach(async () => {
      for (const c of clients.splice(0)) c.destroy();
      await waitFor(() => server.openConnections === 0, "every connection closed");
      expect(uncaught).toEqual([]);
    });
    afterAll(async () => {
      await server.close();
    });

    for (const path of ["/json-cut", "/json-reset"]) {
      it(`${path}: as many attempts as NodeHttpHandler and upstream, the same final error code`, async () => {
        const outcomes: Record<string, { attempts: number; code: unknown; name: unknown }> = {};
        const handlers = {
          undici: new UndiciHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any }),
          node: new NodeHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any }),
          upstream: new SmithyNodeHttpHandler({ httpsAgent: { ca: CA } } as any),
        };
        for (const [name, requestHandler] of Object.entries(handlers)) {
          const client = new DynamoDBClient({
            endpoint: `${server.protocol}//${server.hostname}:${server.port}${path}-${name}`,
            region: "us-east-1",
            credentials: { accessKeyId: "a", secretAccessKey: "b" },
            requestHandler: requestHandler as any,
            logger: quiet as any,
          });
          clients.push(client);
          const before = server.requests.get(path) ?? 0;
          let error: any;
          try {
            await client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "a" } } }));
          } catch (e) {
            error = e;
          }
          outcomes[name] = {
            attempts: (server.requests.get(path) ?? 0) - before,
            code: error?.code,
            name: error?.name,
          };
          expect(error?.$metadata?.attempts).toBe(outcomes[name].attempts);
        }
        expect(outcomes.undici).toEqual(outcomes.node);
        expect(outcomes.undici).toEqual(outcomes.upstream);
        // Retried (the client's default retry strategy: more than one attempt), ending in the same ECONNRESET.
        expect(outcomes.undici.attempts).toBeGreaterThan(1);
        expect(outcomes.undici.code).toBe("ECONNRESET");
        expect(handlers.undici.getPoolStats().totals.inFlight).toBe(0);
      });
    }
  });
}
