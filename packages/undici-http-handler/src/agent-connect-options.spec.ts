import http from "node:http";
import https from "node:https";
import agentkeepalive from "agentkeepalive";
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

  it("an agentkeepalive agent: only the values the caller chose are ignored with a warning, not agentkeepalive's defaults", () => {
    for (const AgentClass of [agentkeepalive, agentkeepalive.HttpsAgent]) {
      const name = `${AgentClass.name} defaults`;
      // agentkeepalive writes freeSocketTimeout 4000, timeout 8000 and socketActiveTTL 0 into the options it is given.
      const plain = new AgentClass();
      expect({ name, ...agentConnectOptions("httpsAgent", plain) }).toMatchObject({ name, ignored: [] });
      // With maxSockets and a CA only: the CA is used, nothing warned.
      const withCa = new AgentClass({ maxSockets: 3, ca: "CA" } as never);
      expect(agentConnectOptions("httpsAgent", withCa)).toMatchObject({ connect: { ca: "CA" }, ignored: [] });
      // freeSocketTimeout 5000 makes agentkeepalive derive timeout 10000 (not the caller's choice: not warned).
      const idle = new AgentClass({ freeSocketTimeout: 5000 });
      expect((idle as unknown as { options: { timeout: number } }).options.timeout).toBe(10_000);
      expect(agentConnectOptions("httpsAgent", idle).ignored).toEqual([
        "httpsAgent.freeSocketTimeout=5000 (agentkeepalive's idle timeout: use idleSocketTimeout)",
      ]);
      const chosen = new AgentClass({ timeout: 30_000, socketActiveTTL: 60_000, maxFreeSockets: 4 });
      expect(agentConnectOptions("httpAgent", chosen).ignored).toEqual([
        "httpAgent.timeout=30000 (use idleSocketTimeout / socketTimeout)",
        "httpAgent.socketActiveTTL=60000 (agentkeepalive's socket lifetime: use connectionLifetime)",
        "httpAgent.maxFreeSockets=4 (undici keeps every idle connection until idleSocketTimeout)",
      ]);
      for (const agent of [plain, withCa, idle, chosen]) agent.destroy();
    }
  });

  it("a Node http.Agent / https.Agent: no warning for its defaults, one per value the caller set", () => {
    for (const AgentClass of [http.Agent, https.Agent]) {
      const plain = new AgentClass();
      expect(agentConnectOptions("httpAgent", plain).ignored).toEqual([]);
      const chosen = new AgentClass({
        keepAlive: true,
        timeout: 5000,
        maxFreeSockets: 256,
        maxTotalSockets: 10,
        scheduling: "lifo",
        noDelay: false,
      });
      // Equal to Node's defaults (maxFreeSockets 256, scheduling "lifo") or not: the caller set them, Node stores only
      // what it was given.
      expect(agentConnectOptions("httpAgent", chosen).ignored).toEqual([
        "httpAgent.timeout=5000 (use idleSocketTimeout / socketTimeout)",
        "httpAgent.maxFreeSockets=256 (undici keeps every idle connection until idleSocketTimeout)",
        "httpAgent.maxTotalSockets=10 (limits are per origin (maxSockets))",
        'httpAgent.scheduling="lifo" (undici picks connections itself)',
        "httpAgent.noDelay=false (undici always disables Nagle's algorithm)",
      ]);
      plain.destroy();
      chosen.destroy();
    }
  });

  it("nothing or a non-object maps to nothing", () => {
    for (const agent of [undefined, null, 5]) {
      expect(agentConnectOptions("httpAgent", agent)).toMatchObject({ connect: {}, keepAlive: true, ignored: [] });
    }
  });
});
