import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  streamFirstFrame: Histogram<'route' | 'frame'>;
  streamDuration: Histogram<'route'>;
}

/** Seconds a visitor waits on a streamed answer: the model's own seconds, and the platform's time over them. */
const STREAM_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 15, 30, 60, 120];

/** One registry per process, exposed on `GET /metrics` in the Prometheus text format. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method and route template',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    // An event stream's response starts before its turn runs, so http_request_duration_seconds ends there: these two
    // time what the client waits for, from the request's start.
    streamFirstFrame: new Histogram({
      name: 'http_stream_first_frame_seconds',
      help: 'Event streams: time to the first frame, by route template and that frame (delta, error, or end)',
      labelNames: ['route', 'frame'],
      buckets: STREAM_BUCKETS,
      registers: [registry],
    }),
    streamDuration: new Histogram({
      name: 'http_stream_duration_seconds',
      help: 'Event streams: time to the end frame, by route template',
      labelNames: ['route'],
      buckets: STREAM_BUCKETS,
      registers: [registry],
    }),
  };
}
