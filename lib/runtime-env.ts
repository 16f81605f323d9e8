import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm start` writes the addresses and the sealing key of the stack it started to `$DATA_DIR/runtime.env` (default
 * `.data/`, mode 0600),
 * so `npx agentctl …` in another terminal reaches the same database without the user copying anything. Variables
 * already set in the environment always win.
 */
const RUNTIME_ENV_FILE = path.join(process.env.DATA_DIR || path.join(__dirname, '..', '.data'), 'runtime.env');

export function writeRuntimeEnv(values: Record<string, string>, file = RUNTIME_ENV_FILE): void {
  writeFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
    { mode: 0o600 },
  );
}

export function withRuntimeEnv(
  env: Record<string, string | undefined>,
  file = RUNTIME_ENV_FILE,
): Record<string, string | undefined> {
  if (!existsSync(file)) return env;
  const fromFile = Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { ...fromFile, ...Object.fromEntries(Object.entries(env).filter(([, v]) => v)) };
}
