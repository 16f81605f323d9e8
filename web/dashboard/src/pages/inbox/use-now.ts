import { useEffect, useState } from 'preact/hooks';

/** Re-renders every 30 s, so "2 min ago" stays true while the page is open all day. */
export function useNow(every = 30_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), every);
    return () => clearInterval(timer);
  }, [every]);
  return now;
}
