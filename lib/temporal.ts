import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

export interface Temporal {
  connection: Connection;
  client: Client;
  taskQueue: string;
  namespace: string;
  uiUrl: string;
}

function connectionOptions(config: Config) {
  const tls = config.TEMPORAL_TLS
    ? {
        clientCertPair:
          config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
            ? { crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH), key: readFileSync(config.TEMPORAL_TLS_KEY_PATH) }
            : undefined,
      }
    : undefined;
  return {
    address: config.TEMPORAL_ADDRESS,
    tls,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/**
 * One Temporal client per process. The API connects lazily so it starts (and answers `/readyz` 503) while
 * Temporal is still coming up; the worker connects eagerly because it cannot do anything without it.
 */
export async function createTemporal(config: Config, opts: { lazy?: boolean } = {}): Promise<Temporal> {
  const options = connectionOptions(config);
  const connection = opts.lazy ? Connection.lazy(options) : await Connection.connect(options);
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  return {
    connection,
    client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    namespace: config.TEMPORAL_NAMESPACE,
    uiUrl: config.TEMPORAL_UI_URL,
  };
}

/** Link to one workflow execution in the Temporal Web UI, for ops staff and the run log. */
export function workflowUiUrl(t: Pick<Temporal, 'uiUrl' | 'namespace'>, workflowId: string): string {
  return `${t.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(t.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** Resolves when Temporal answers, rejects after `timeoutMs`: the readiness probe. */
export async function pingTemporal(t: Temporal, timeoutMs = 2_000): Promise<void> {
  await t.connection.withDeadline(Date.now() + timeoutMs, () => t.connection.workflowService.getSystemInfo({}));
}
