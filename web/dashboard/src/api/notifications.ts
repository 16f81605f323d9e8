import type { NotificationView } from '../../../shared/contract';
import { call } from './client';

/** The workspace's notifications: the Notifications page's list and marking read, and the shell's counts. */

export type Notification = NotificationView;

/** What the shell shows in its badges: unread notifications, and visitors waiting for a person. */
export interface ShellCounts {
  unread: number;
  waiting: number;
}

export const notificationsApi = {
  list: () => call<{ notifications: Notification[]; unread?: number }>('GET', '/v1/dashboard/notifications'),
  /** No ids: every notification of the workspace. */
  markRead: (ids?: string[]) =>
    call<{ status: string }>('POST', '/v1/dashboard/notifications/read', ids ? { ids } : {}),
  /**
   * The shell's counts (the nav's Notifications and Inbox badges, the title's count). After marking some read the
   * Notifications page calls `useSession().refreshUnread()`.
   */
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
