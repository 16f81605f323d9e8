import { useEffect, useRef, useState } from 'preact/hooks';
import type { Failure } from '../../api/client';
import { type ThreadSummary, inboxApi } from '../../api/inbox';
import { usePolling } from '../../use-polling';
import { LIMITS } from '../../../../shared/contract';
import { LIST_POLL_MS, MAX_BACKOFF_MS, type View, arrivalsAnnouncement, statusesOf } from './model';

/** The list shows a page of the API's default size, and "Show more" adds as many, up to the API's largest page. */
const PAGE_STEP = LIMITS.pageSize.default;
const MAX_PAGE = LIMITS.pageSize.max;

export type ListState =
  | { state: 'loading' }
  | { state: 'error'; failure: Failure }
  | { state: 'ready'; threads: ThreadSummary[]; more: boolean; stale?: Failure };

/**
 * The inbox's list for a view: read now, then every few seconds. What is shown stays while it is read again (no
 * flicker); a changed filter starts from "loading", a longer page keeps the rows. Requests that arrive are announced.
 * Returns the list, `refresh` (read at once) and `showMore`.
 */
export function useInboxList(view: View, announce: (text: string) => void) {
  const filterKey = `${view.status}|${view.agent}`;
  const [list, setList] = useState<ListState>({ state: 'loading' });
  const [limit, setLimit] = useState<number>(PAGE_STEP);

  const shownFilter = useRef('');
  const known = useRef<Map<string, string> | undefined>(undefined);
  useEffect(() => {
    const fresh = shownFilter.current !== filterKey;
    shownFilter.current = filterKey;
    known.current = undefined;
    if (fresh) setList({ state: 'loading' });
  }, [filterKey, limit]);
  const refresh = usePolling(
    async (stopped) => {
      const res = await inboxApi.threads({
        status: view.status === 'all' ? 'all' : 'open',
        ...(view.status === 'mine' ? { assignee: 'me' as const } : {}),
        botId: view.agent || undefined,
        limit,
      });
      if (stopped()) return 'stop';
      if (!res.ok) {
        setList((prev) => (prev.state === 'ready' ? { ...prev, stale: res } : { state: 'error', failure: res }));
        return 'failed';
      }
      const threads = res.value.threads;
      const arrived = arrivalsAnnouncement(known.current, threads);
      if (arrived) announce(arrived);
      known.current = statusesOf(threads);
      setList({ state: 'ready', threads, more: Boolean(res.value.next_cursor) && limit < MAX_PAGE });
      return 'ok';
    },
    { everyMs: LIST_POLL_MS, maxBackoffMs: MAX_BACKOFF_MS },
    [filterKey, limit],
  );

  return { list, refresh, showMore: () => setLimit((n) => Math.min(MAX_PAGE, n + PAGE_STEP)) };
}
