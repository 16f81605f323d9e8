import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs. Secrets never reach them: the redact list covers every header that carries one. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'req.headers["x-bot-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-hook-signature"]',
        '*.password',
        '*.secret',
        '*.key',
      ],
      censor: '[redacted]',
    },
  });
}
