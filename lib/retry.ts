import { isUnavailableError } from './errors';

/** Runs `fn` again after a connection failure (Postgres restarting) until it succeeds or `forMs` has passed. */
export async function retrying<T>(forMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailableError(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
