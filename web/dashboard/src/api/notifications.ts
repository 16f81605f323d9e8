import { call } from './client';

/** What the shell shows in its badges: unread notifications, and visitors waiting for a person. */
export interface ShellCounts {
  unread: number;
  waiting: number;
}

/**
 * The shell's counts (the nav's Notifications and Inbox badges, the title's count). The Notifications page has its
 * own calls (api/ops.ts); after marking some read it calls `useSession().refreshUnread()`.
 */
export const notifications = {
  counts: async () => {
    const res = await call<{
      notifications: { read_at?: number | null }[];
      unread?: number;
      waiting_requests?: number;
    }>('GET', '/v1/dashboard/notifications');
    if (!res.ok) return res;
    // `unread` is new in the contract; before it, every notification without `read_at` counts.
    const { unread, waiting_requests, notifications: list } = res.value;
    const value: ShellCounts = {
      unread: typeof unread === 'number' ? unread : list.filter((n) => !n.read_at).length,
      waiting: waiting_requests ?? 0,
    };
    return { ok: true as const, value };
  },
};
