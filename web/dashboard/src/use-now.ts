import { useEffect, useState } from 'preact/hooks';

/**
 * The time now, read again every `everyMs` while `running`: the pages' one clock, for what goes stale as time passes
 * ("2 min ago", a countdown, how long an answer has been worked on). Started again, it reads the time at once.
 */
export function useNow(everyMs: number, running = true): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!running) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs, running]);
  return now;
}
