import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { migrate } from '../lib/migrate';
import { type Balancer, startBalancer } from './balancer';
import { childEnv, startApi, startWorker, waitForApi } from './platform';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './postgres';
import { type ManagedProcess, freePort, stopList } from './processes';
import { type TemporalServer, startTemporalServer } from './temporal-server';
import { type TemporalUi, startTemporalUi } from './temporal-ui';

/**
 * The production shape on one machine (`npm run cluster`, and the `cluster` test project): a real Temporal server
 * (its four services, on a Postgres of their own), the project's database on another Postgres, N API replicas behind
 * a real balancer (Caddy with deploy/Caddyfile), and M workers on one task queue. Every setting a real deployment needs is set here by
 * name — README, "Scale it out".
 */
export interface ClusterOptions {
  dataDir: string;
  apis: number;
  workers: number;
  /** The balancer's port: where clients reach the platform. */
  port: number;
  /**
   * The Temporal UI's port (a free one when not given). The UI runs with the cluster's own Temporal server, unless
   * TEMPORAL_UI_URL names one already; with TEMPORAL_ADDRESS, the UI is the operator's.
   */
  uiPort?: number;
  /** Configuration for every API and worker (README, Configure it); DATABASE_URL / TEMPORAL_ADDRESS use existing ones. */
  env?: Record<string, string | undefined>;
  quiet?: boolean;
  /** Each process's output in `<logDir>/<name>.log` (api-1, worker-2, temporal-frontend…). */
  logDir?: string;
  log?: (message: string) => void;
}

export interface Cluster {
  /** The balancer: the platform's address. */
  url: string;
  env: Record<string, string>;
  apis: { url: string; process: ManagedProcess }[];
  workers: ManagedProcess[];
  balancer: Balancer;
  temporal?: TemporalServer;
  /** The Temporal UI this cluster runs (the run log's links lead there: TEMPORAL_UI_URL). */
  temporalUi?: TemporalUi;
  postgres?: EmbeddedPostgres;
  /** Starts one more worker on the task queue. */
  addWorker(): Promise<ManagedProcess>;
  /** Stops replica `index` (SIGKILL: a crash) and starts it again on the same port. */
  restartApi(index: number, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const log = opts.log ?? (() => undefined);
  mkdirSync(opts.dataDir, { recursive: true });
  const env = childEnv(opts.dataDir, opts.env);
  const child = { quiet: opts.quiet, logDir: opts.logDir };
  const { add: onStop, stopAll } = stopList();
  try {
    let postgres: EmbeddedPostgres | undefined;
    if (!env.DATABASE_URL) {
      log('starting the platform’s Postgres');
      postgres = await startEmbeddedPostgres({
        dataDir: path.join(opts.dataDir, 'postgres'),
        port: await freePort(),
        database: 'agent_platform',
        quiet: true,
      });
      onStop(() => postgres!.stop());
      env.DATABASE_URL = postgres.url;
    }
    let temporal: TemporalServer | undefined;
    if (!env.TEMPORAL_ADDRESS) {
      log('starting the Temporal server (frontend, history, matching, worker) on its own Postgres');
      temporal = await startTemporalServer({
        dataDir: path.join(opts.dataDir, 'temporal'),
        namespace: env.TEMPORAL_NAMESPACE ?? 'default',
        logDir: opts.logDir,
        quiet: true,
      });
      onStop(() => temporal!.stop());
      env.TEMPORAL_ADDRESS = temporal.address;
    }
    let temporalUi: TemporalUi | undefined;
    if (temporal && !env.TEMPORAL_UI_URL) {
      // Ops staff inspect runs here, and the dashboard's run log links each run to it.
      log('starting the Temporal UI');
      temporalUi = await startTemporalUi({
        dataDir: path.join(opts.dataDir, 'temporal-ui'),
        temporalAddress: temporal.address,
        namespace: temporal.namespace,
        port: opts.uiPort ?? (await freePort()),
        logDir: opts.logDir,
        quiet: true,
      });
      onStop(() => temporalUi!.stop());
      env.TEMPORAL_UI_URL = temporalUi.url;
    }
    log('applying migrations');
    await migrate(env.DATABASE_URL, () => undefined);

    // Behind the balancer: the client is the address it writes in X-Forwarded-For (replacing whatever the client sent);
    // links use the balancer's address. The replicas listen on loopback only: nobody reaches them around the
    // balancer, where any X-Forwarded-For would be believed.
    env.TRUST_PROXY = 'true';
    env.TRUST_PROXY_HOPS = '1';
    env.HOST = '127.0.0.1';
    env.PUBLIC_BASE_URL ||= `http://127.0.0.1:${opts.port}`;

    const workers: ManagedProcess[] = [];
    onStop(async () => {
      await Promise.all(workers.map((w) => w.stop()));
    });
    const addWorker = async () => {
      const w = await startWorker(env, { ...child, name: `worker-${workers.length + 1}` });
      workers.push(w);
      return w;
    };
    log(`starting ${opts.workers} worker${opts.workers === 1 ? '' : 's'}`);
    for (let i = 0; i < opts.workers; i++) await addWorker();

    const apis: { url: string; port: number; process: ManagedProcess }[] = [];
    onStop(async () => {
      await Promise.all(apis.map((a) => a.process.stop()));
    });
    const startReplica = async (index: number, port: number) => {
      const proc = startApi({ ...env, PORT: String(port) }, { ...child, name: `api-${index + 1}` });
      const url = `http://127.0.0.1:${port}`;
      await waitForApi(url, proc);
      apis[index] = { url, port, process: proc };
    };
    log(`starting ${opts.apis} API replica${opts.apis === 1 ? '' : 's'}`);
    for (let i = 0; i < opts.apis; i++) await startReplica(i, await freePort());

    log('starting the balancer (Caddy, deploy/Caddyfile)');
    const balancer = await startBalancer({
      port: opts.port,
      backends: apis.map((a) => a.url),
      dataDir: path.join(opts.dataDir, 'balancer'),
      ...child,
    });
    onStop(() => balancer.close());

    return {
      url: balancer.url,
      env,
      apis,
      workers,
      balancer,
      temporal,
      temporalUi,
      postgres,
      addWorker,
      async restartApi(index, signal = 'SIGKILL') {
        await apis[index].process.stop(signal);
        await startReplica(index, apis[index].port);
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
