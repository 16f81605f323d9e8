import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ManagedProcess, startProcess, waitFor } from './processes';

/**
 * The Temporal UI for a Temporal server of one's own (`npm run cluster`): Temporal's ui-server, built from the Go
 * module proxy with `go install` by `scripts/setup.sh` (its web app is embedded in the binary), pointed at the
 * frontend. The dev server of `npm start` serves its own UI; a real server does not, and without one ops staff
 * have nowhere to inspect runs and the dashboard's run links lead nowhere (temporal-config/README.md).
 */
const TEMPORAL_UI_VERSION = 'v2.42.1'; // scripts/setup.sh builds the same; the Temporal CLI's own UI version
const ROOT = path.join(__dirname, '..');
const TEMPORAL_UI_DIR = path.join(ROOT, '.tools', 'temporal-ui', TEMPORAL_UI_VERSION);

export interface TemporalUi {
  /** Where people open it, and what TEMPORAL_UI_URL is set to. */
  url: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** The ui-server's configuration: the frontend it reads, its port, the namespace it opens on. */
function uiConfig(opts: { temporalAddress: string; port: number; namespace: string }): string {
  return [
    `temporalGrpcAddress: ${opts.temporalAddress}`,
    'host: 127.0.0.1', // loopback only, like the frontend it reads: this UI has no sign-in of its own
    `port: ${opts.port}`,
    'enableUi: true',
    `defaultNamespace: ${opts.namespace}`,
    'publicPath:',
    'showTemporalSystemNamespace: false',
    'notifyOnNewVersion: false',
    'cors:',
    '  cookieInsecure: true', // served over plain http on this machine; behind TLS in a real deployment
    '  allowOrigins: []',
    '',
  ].join('\n');
}

export async function startTemporalUi(opts: {
  dataDir: string;
  temporalAddress: string;
  namespace: string;
  port: number;
  logDir?: string;
  quiet?: boolean;
}): Promise<TemporalUi> {
  const bin = path.join(TEMPORAL_UI_DIR, 'server');
  if (!existsSync(bin)) {
    throw new Error(
      `The Temporal UI ${TEMPORAL_UI_VERSION} is not built (${bin} is missing): run \`bash scripts/setup.sh --cluster\``,
    );
  }
  const configDir = path.join(opts.dataDir, 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(path.join(configDir, 'production.yaml'), uiConfig(opts));
  const log = opts.logDir ? path.join(opts.logDir, 'temporal-ui.log') : undefined;
  if (opts.logDir) mkdirSync(opts.logDir, { recursive: true });
  const proc = startProcess(
    'temporal-ui',
    bin,
    ['--root', opts.dataDir, '--config', 'config', '--env', 'production', 'start'],
    {
      quiet: opts.quiet,
      onLine: log ? (line) => appendFileSync(log, `${line}\n`) : undefined,
    },
  );
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    await waitFor('the Temporal UI', async () => (await fetch(`${url}/healthz`)).ok, 30_000, proc.child);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { url, process: proc, stop: () => proc.stop() };
}
