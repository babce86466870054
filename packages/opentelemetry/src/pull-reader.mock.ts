/**
 * A `MetricReader` the test pulls from (`collect()`), with nothing to flush or shut down: the reader the bridge's specs
 * attach to a real `MeterProvider`. Test helper (`*.mock.ts`): not part of the build.
 */
import { MetricReader } from "@opentelemetry/sdk-metrics";

export class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
