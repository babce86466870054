/** A `Logger` (the SDK's shape) that records every call, so tests can assert who received which warning. */
import { format } from "node:util";

/** One recorded call. @internal */
export interface LogEntry {
  readonly level: "trace" | "debug" | "info" | "warn" | "error";
  readonly message: string;
}

/** @internal */
export class RecordingLogger {
  readonly entries: LogEntry[] = [];

  trace(...args: unknown[]): void {
    this.record("trace", args);
  }
  debug(...args: unknown[]): void {
    this.record("debug", args);
  }
  info(...args: unknown[]): void {
    this.record("info", args);
  }
  warn(...args: unknown[]): void {
    this.record("warn", args);
  }
  error(...args: unknown[]): void {
    this.record("error", args);
  }

  /** Messages logged at `warn`. */
  warnings(): string[] {
    return this.entries.filter((e) => e.level === "warn").map((e) => e.message);
  }

  private record(level: LogEntry["level"], args: unknown[]): void {
    this.entries.push({ level, message: format(...args) });
  }
}
