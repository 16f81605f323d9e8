import type { Mailer } from './mailer';

/**
 * E-mails to people (password resets, invitations): through SMTP when `SMTP_URL` is set. Without it — a development
 * set-up — the message, link included, is written to the log instead, so a local install can still be used; README
 * says so, and production sets SMTP_URL.
 */
export interface Outbox {
  /** `delivered` is false when the message only went to the log. */
  send(to: string, subject: string, text: string): Promise<{ delivered: boolean }>;
}

export function createOutbox(
  mailer: Mailer | null,
  log: (fields: Record<string, unknown>, message: string) => void,
): Outbox {
  return {
    async send(to, subject, text) {
      if (mailer) {
        await mailer.send(to, subject, text);
        return { delivered: true };
      }
      log({ to, subject, text }, 'e-mail not sent (SMTP_URL is not set); its text follows');
      return { delivered: false };
    },
  };
}
