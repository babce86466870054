/**
 * What ships reads like the source: every object of a Sockeye class reachable from a handler built from `dist`, with
 * a request in flight, has exactly the fields its source class (and the source classes it extends) declares, and
 * every prototype the methods its source class declares, by their source names. A build step that renamed members
 * (a minifier's property mangling) fails here, naming the class and the member.
 * Reads the packages' `dist/` (built by `npm test` before vitest runs); the servers are on 127.0.0.1.
 */
import { once } from "node:events";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishedPackages } from "./lib/published-packages.mjs";

/** Members of one class as its source declares them (instance side only; `#private` names are invisible anyway). */
interface SourceClass {
  file: string;
  base: string | undefined;
  /** Fields a constructed instance always owns: initialised or not, and constructor parameter properties. */
  fields: Set<string>;
  /** `declare` fields: owned once assigned. */
  declared: Set<string>;
  /** Methods and accessors with a body. */
  methods: Set<string>;
}

const memberName = (name: ts.PropertyName | ts.BindingName): string | undefined =>
  ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined;
const has = (node: ts.Node, kind: ts.SyntaxKind): boolean =>
  (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []).some((m) => m.kind === kind);

/** Every class declared in the published packages' sources (specs and mocks excluded), by class name. */
function sourceClasses(): Map<string, SourceClass[]> {
  const classes = new Map<string, SourceClass[]>();
  for (const pkg of publishedPackages()) {
    const src = join(pkg.dir, "src");
    for (const rel of readdirSync(src, { recursive: true }).map(String)) {
      if (!rel.endsWith(".ts") || /\.(spec|mock|d)\.ts$/.test(rel)) continue;
      const file = join(src, rel);
      const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, false);
      const visit = (node: ts.Node): void => {
        if (ts.isClassDeclaration(node) && node.name !== undefined) {
          const extendsClause = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
          const baseExpr = extendsClause?.types[0]?.expression;
          const entry: SourceClass = {
            file: `${pkg.relDir}/src/${rel}`,
            base: baseExpr !== undefined && ts.isIdentifier(baseExpr) ? baseExpr.text : undefined,
            fields: new Set(),
            declared: new Set(),
            methods: new Set(),
          };
          for (const m of node.members) {
            if (has(m, ts.SyntaxKind.StaticKeyword) || m.name === undefined) {
              if (ts.isConstructorDeclaration(m)) {
                for (const p of m.parameters) {
                  const name = memberName(p.name);
                  if (name !== undefined && ts.isParameterPropertyDeclaration(p, m)) entry.fields.add(name);
                }
              }
              continue;
            }
            const name = memberName(m.name);
            if (name === undefined) continue;
            if (ts.isPropertyDeclaration(m)) {
              if (has(m, ts.SyntaxKind.DeclareKeyword)) entry.declared.add(name);
              else if (!has(m, ts.SyntaxKind.AbstractKeyword)) entry.fields.add(name);
            } else if ((ts.isMethodDeclaration(m) || ts.isAccessor(m)) && m.body !== undefined) {
              entry.methods.add(name);
            }
          }
          classes.set(node.name.text, [...(classes.get(node.name.text) ?? []), entry]);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
  }
  return classes;
}

const CLASSES = sourceClasses();

/** The fields of `c` and of the source classes it extends; `undefined` when a base is not a Sockeye class. */
function chainFields(c: SourceClass): { fields: Set<string>; declared: Set<string> } | undefined {
  const fields = new Set<string>();
  const declared = new Set<string>();
  for (let at: SourceClass | undefined = c; at !== undefined; ) {
    for (const f of at.fields) fields.add(f);
    for (const f of at.declared) declared.add(f);
    if (at.base === undefined) break;
    const bases = CLASSES.get(at.base);
    if (bases?.length !== 1) return undefined;
    at = bases[0];
  }
  return { fields, declared };
}

/** Differences between `obj` and the source class `c` (none when its names are the source's). */
function mismatches(obj: object, c: SourceClass): string[] {
  const problems: string[] = [];
  const chain = chainFields(c);
  if (chain !== undefined) {
    const own = new Set(Object.getOwnPropertyNames(obj));
    for (const name of own) {
      if (!chain.fields.has(name) && !chain.declared.has(name))
        problems.push(`own field "${name}" is not in the source`);
    }
    for (const name of chain.fields) if (!own.has(name)) problems.push(`source field "${name}" is not an own property`);
  }
  const proto = new Set(Object.getOwnPropertyNames(Object.getPrototypeOf(obj)));
  proto.delete("constructor");
  for (const name of proto) if (!c.methods.has(name)) problems.push(`prototype member "${name}" is not in the source`);
  for (const name of c.methods) if (!proto.has(name)) problems.push(`source method "${name}" is not on the prototype`);
  return problems;
}

/**
 * Walks the objects reachable from `root` (own fields, array items, Map and Set entries), checking every instance of
 * a Sockeye source class against its source. Node's and other libraries' objects are not entered.
 * @returns the Sockeye classes met, and the problems found (`Class (file): problem`)
 */
function checkGraph(root: object): { met: Set<string>; problems: string[] } {
  const met = new Set<string>();
  const problems: string[] = [];
  const seen = new Set<object>();
  const queue: unknown[] = [root];
  while (queue.length > 0) {
    const value = queue.shift();
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) queue.push(...value);
    else if (value instanceof Map) queue.push(...value.keys(), ...value.values());
    else if (value instanceof Set) queue.push(...value);
    else {
      const proto = Object.getPrototypeOf(value);
      const candidates = proto === null || proto === Object.prototype ? undefined : CLASSES.get(proto.constructor.name);
      if (candidates !== undefined) {
        met.add(proto.constructor.name);
        const found = candidates.map((c) => ({ c, p: mismatches(value, c) }));
        if (!found.some((f) => f.p.length === 0)) {
          for (const { c, p } of found) problems.push(...p.map((x) => `${proto.constructor.name} (${c.file}): ${x}`));
        }
      } else if (proto !== null && proto !== Object.prototype) continue; // someone else's object
      for (const name of Object.getOwnPropertyNames(value)) {
        const field = Object.getOwnPropertyDescriptor(value, name);
        if (field !== undefined && "value" in field) queue.push(field.value);
      }
    }
  }
  return { met, problems };
}

const packageDir = (name: string): string => {
  const pkg = publishedPackages().find((p) => p.name === name);
  if (pkg === undefined) throw new Error(`no package ${name}`);
  return pkg.dir;
};
const requireFrom = (name: string) => {
  const main = join(packageDir(name), "dist", "index.js");
  if (!existsSync(main)) throw new Error(`${main} is missing: build the packages first (npm run build)`);
  return createRequire(join(packageDir(name), "package.json"));
};
const nodeDist = requireFrom("@sockeye/node-http-handler")(packageDir("@sockeye/node-http-handler"));
const undiciDist = requireFrom("@sockeye/undici-http-handler")(packageDir("@sockeye/undici-http-handler"));
const poolMonitorDist = requireFrom("@sockeye/node-http-handler")("@sockeye/pool-monitor");
const { HttpRequest } = requireFrom("@sockeye/node-http-handler")("@smithy/protocol-http");

/** Responses the servers hold back until the graph has been walked. */
const held: Array<() => void> = [];
const hold = (_req: unknown, res: ServerResponse | http2.Http2ServerResponse) =>
  held.push(() => (res as ServerResponse).end("ok"));
let h1: http.Server;
let h2: http2.Http2Server;
const portOf = (s: http.Server | http2.Http2Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  h1 = http.createServer(hold);
  h2 = http2.createServer(hold);
  h1.listen(0, "127.0.0.1");
  h2.listen(0, "127.0.0.1");
  await Promise.all([once(h1, "listening"), once(h2, "listening")]);
});
afterAll(async () => {
  h1.closeAllConnections();
  await Promise.all([new Promise((r) => h1.close(r)), new Promise((r) => h2.close(r))]);
});

interface Handler {
  handle(request: unknown): Promise<{ response: { statusCode: number; body: IncomingMessage } }>;
  destroy(): void;
}

const CASES: Array<[string, () => Handler, () => number]> = [
  ["NodeHttpHandler", () => new nodeDist.NodeHttpHandler(), () => portOf(h1)],
  ["NodeHttp2Handler", () => new nodeDist.NodeHttp2Handler(), () => portOf(h2)],
  ["UndiciHttpHandler", () => new undiciDist.UndiciHttpHandler(), () => portOf(h1)],
];

describe.each(CASES)("dist %s shows its source names", (className, create, port) => {
  it("with a request in flight, every Sockeye object reachable from it has its source class's members", async () => {
    const handler = create();
    try {
      const pending = handler.handle(
        new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port: port(), method: "GET", path: "/" })
      );
      const failed = pending.then(
        () => "answered before the server did",
        (e: Error) => `failed: ${e.message}`
      );
      let outcome: string | undefined;
      void failed.then((o) => {
        outcome = o;
      });
      while (held.length === 0 && outcome === undefined) await new Promise((r) => setTimeout(r, 5));
      expect(outcome, "the request reached the server").toBeUndefined();
      const { met, problems } = checkGraph(handler as object);
      expect(problems).toEqual([]);
      expect(met).toContain(className);
      // The handler, its pool or runtime, the request, the scheduler, telemetry: not only the handler object.
      expect(met.size, [...met].join(", ")).toBeGreaterThanOrEqual(5);
      for (const release of held.splice(0)) release();
      const { response } = await pending;
      expect(response.statusCode).toBe(200);
      response.body.resume();
    } finally {
      for (const release of held.splice(0)) release();
      handler.destroy();
    }
  });
});

it("a PoolMonitor of the dist has its source class's members", () => {
  const monitor = new poolMonitorDist.PoolMonitor();
  try {
    const { met, problems } = checkGraph(monitor);
    expect(problems).toEqual([]);
    expect(met).toContain("PoolMonitor");
  } finally {
    monitor.stop?.();
  }
});

it("the ESM builds' handlers have the CommonJS builds' member names", async () => {
  const esm = async (name: string) =>
    import(
      pathToFileURL(join(packageDir(name), requireFrom(name)(join(packageDir(name), "package.json")).module)).href
    );
  const builds: Array<[Record<string, new () => Handler>, Record<string, new () => Handler>, string]> = [
    [await esm("@sockeye/node-http-handler"), nodeDist, "NodeHttpHandler"],
    [await esm("@sockeye/node-http-handler"), nodeDist, "NodeHttp2Handler"],
    [await esm("@sockeye/undici-http-handler"), undiciDist, "UndiciHttpHandler"],
  ];
  for (const [esmBuild, cjsBuild, name] of builds) {
    const [a, b] = [new esmBuild[name](), new cjsBuild[name]()];
    try {
      expect(Object.getOwnPropertyNames(a).sort(), name).toEqual(Object.getOwnPropertyNames(b).sort());
      expect(Object.getOwnPropertyNames(esmBuild[name].prototype).sort(), name).toEqual(
        Object.getOwnPropertyNames(cjsBuild[name].prototype).sort()
      );
    } finally {
      a.destroy();
      b.destroy();
    }
  }
});

it("catches a renamed member (the check is not vacuous)", () => {
  const handler = new nodeDist.NodeHttpHandler();
  try {
    const [name] = Object.getOwnPropertyNames(handler);
    const renamed = Object.create(Object.getPrototypeOf(handler));
    for (const key of Object.getOwnPropertyNames(handler)) renamed[key === name ? "Ab" : key] = handler[key];
    expect(checkGraph(renamed).problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`own field "Ab" is not in the source`),
        expect.stringContaining(`source field "${name}" is not an own property`),
      ])
    );
  } finally {
    handler.destroy();
  }
});
