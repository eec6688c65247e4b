import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** The one root logger; modules take `logger.child({ module })`. The destination is injected. */
export function createLogger(destination: DestinationStream, level: string = process.env['HANDOFF_LOG_LEVEL'] ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The bearer token must never reach a log line, whatever a caller passes.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'headers.cookie'], censor: '[redacted]' },
    },
    destination,
  );
}
