import { call } from './client';

/**
 * The shell's unread count (the nav's Notifications badge). The Notifications page has its own calls
 * (api/ops.ts); after marking some read it calls `useSession().refreshUnread()`.
 */
export const notifications = {
  unread: async () => {
    const res = await call<{ notifications: { read_at?: number | null }[]; unread?: number }>(
      'GET',
      '/v1/dashboard/notifications',
    );
    if (!res.ok) return res;
    // `unread` is new in the contract; before it, every notification without `read_at` counts.
    const { unread, notifications: list } = res.value;
    return { ok: true as const, value: typeof unread === 'number' ? unread : list.filter((n) => !n.read_at).length };
  },
};
