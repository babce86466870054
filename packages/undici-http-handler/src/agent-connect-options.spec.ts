import http from "node:http";
import https from "node:https";
import { describe, expect, it } from "vitest";
import { agentConnectOptions } from "./agent-connect-options";

describe("agentConnectOptions", () => {
  it("maps an options object: TLS/socket keys to connect, pool keys to pool settings, the rest warned", () => {
    const lookup = () => {};
    const m = agentConnectOptions("httpsAgent", {
      maxSockets: 10,
      ca: "CA",
      rejectUnauthorized: false,
      lookup,
      localAddress: "127.0.0.2",
      keepAlive: false,
      keepAliveMsecs: 2000,
      timeout: 5000,
      maxFreeSockets: 3,
      host: "elsewhere",
    } as https.AgentOptions);
    expect(m.connect).toEqual({ ca: "CA", rejectUnauthorized: false, lookup, keepAliveInitialDelay: 2000 });
    expect(m.localAddress).toBe("127.0.0.2");
    expect(m.keepAlive).toBe(false);
    expect(m.ignored).toEqual([
      "httpsAgent.timeout=5000 (use idleSocketTimeout / socketTimeout)",
      "httpsAgent.maxFreeSockets=3 (undici keeps every idle connection until idleSocketTimeout)",
    ]);
  });

  it("reads an Agent instance's options, without the keys Node adds itself; one that connects itself is a TypeError", () => {
    const plain = agentConnectOptions("httpsAgent", new https.Agent({ ca: "CA", keepAlive: true }));
    expect(plain.connect).toEqual({ ca: "CA" });
    expect(plain.ignored).toEqual([]);
    expect(plain.keepAlive).toBe(true);
    class ProxyLike extends http.Agent {
      override createConnection(): any {
        return undefined;
      }
    }
    expect(() => agentConnectOptions("httpAgent", new ProxyLike())).toThrow(
      /^@sockeye\/undici-http-handler - invalid option httpAgent: ProxyLike with its own createConnection\(\), which undici cannot use/
    );
    class AgentBaseLike extends https.Agent {
      connect(): any {
        return undefined;
      }
    }
    expect(() => agentConnectOptions("httpsAgent", new AgentBaseLike())).toThrow(
      /AgentBaseLike with its own connect\(\)/
    );
    const tunnelLike = { addRequest() {}, options: {} };
    expect(() => agentConnectOptions("httpsAgent", tunnelLike)).toThrow(/its own addRequest\(\)/);
  });

  it("nothing or a non-object maps to nothing", () => {
    for (const agent of [undefined, null, 5]) {
      expect(agentConnectOptions("httpAgent", agent)).toMatchObject({ connect: {}, keepAlive: true, ignored: [] });
    }
  });
});
