/**
 * What the widget tells a visitor who asked for a person (docs/widget.md, "Asking for a person"): that the team will
 * reply in the chat, and how soon they usually do, or, with nobody there, that leaving a contact is the way. DOM-free.
 */
/**
 * What the rules read of the configuration's `team` (the contract's, web/shared/contract.ts: conversation.ts hands it
 * over, so the two cannot drift apart); this file imports nothing, so a test loads it anywhere.
 */
export interface Team {
  online: boolean;
  typical_reply_seconds: number | null;
}

/** "within a minute", "within about 4 minutes", "within about 2 hours". */
export function typicalWait(seconds: number): string {
  if (seconds < 60) return 'within a minute';
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `within about ${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(seconds / 3600);
  return `within about ${hours} hour${hours === 1 ? '' : 's'}`;
}

/** The line the conversation shows once the handoff went through; `leaveContact` when the contact form should open. */
export function handoffNotice(team: Team | undefined): { text: string; leaveContact: boolean } {
  if (team && !team.online) {
    return {
      text: 'Nobody from the team is online right now. Leave your contact and we will get back to you, or keep writing here.',
      leaveContact: true,
    };
  }
  const when = team?.typical_reply_seconds ? `, usually ${typicalWait(team.typical_reply_seconds)}` : '';
  return {
    text: `You asked for a person. Someone from the team will reply here, in this chat${when}.`,
    leaveContact: false,
  };
}
