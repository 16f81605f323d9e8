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

/**
 * Text someone chose (a workspace's name) as it is quoted in an e-mail, so it cannot pass for the platform's own words:
 * on one line (line breaks, tabs and other control or invisible formatting characters, bidirectional overrides
 * included, become spaces), without quotation marks of its own that would end the quotation, and with addresses
 * defused so no mail program makes them a link (`https[:]//example[.]com`). The caller puts it between “ and ”.
 */
export function quotedInEmail(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/["“”„‟«»]/g, "'")
    .replace(/\b([a-z][a-z0-9+.-]*):(?=\/\/)/gi, '$1[:]')
    .replace(/([\p{L}\p{N}_-])\.(?=[\p{L}\p{N}])/gu, '$1[.]');
}
