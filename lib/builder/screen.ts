import type { BuilderPrincipal } from '../../workflows/contracts/builder-thread';

/**
 * Requests the builder refuses at once, before the model and without asking consent (contract, Builder over MCP, rules
 * 6 and 7). The tool layer already has no tool for any of these (lib/builder/tools.ts); answering here as well means
 * the refusal is immediate and the same every time, whatever the model would have said.
 */
interface Refusal {
  rule: 6 | 7;
  what: string;
  /** Only refused to a program with a builder key (rule 7); a signed-in person may (the dashboard builder). */
  keyOnly?: boolean;
  /** The request's verb, at the start of a sentence (after "please", "can you", "I want you to", …). */
  verbs: string;
  /** What it is about, anywhere in the same sentence. */
  about: RegExp;
  where: string;
}

const REFUSALS: Refusal[] = [
  {
    rule: 6,
    what: 'invite people to the dashboard',
    verbs: 'invite',
    about: /./,
    where: 'The workspace owner invites people in the dashboard.',
  },
  {
    rule: 6,
    what: 'hand an agent over, cancel a handover, or accept or decline an agent handed over',
    verbs: 'hand|give|transfer|pass|cancel|revoke|withdraw|accept|decline|reject|take',
    about:
      /\b(hand ?over|hand-over|handed|transfer|ownership|(agent|bot)\b.*\b(over|to (another|someone|my|his|her|their)))/i,
    where: 'Handovers are made and answered by the owners themselves in the dashboard.',
  },
  {
    rule: 6,
    what: 'restore a deleted agent',
    verbs: 'restore|undelete|recover|bring back|revive|resurrect',
    about: /\b(agent|bot)s?\b/i,
    where: 'A deleted agent cannot be restored by the builder.',
  },
  {
    rule: 7,
    what: 'buy a plan or credits',
    verbs: 'buy|purchase|pay|upgrade|top up|subscribe|order',
    about: /\b(plan|credits?|subscription|tier|billing)\b/i,
    where: 'Plans and credits are bought by the owner in the dashboard.',
  },
  {
    rule: 7,
    what: 'issue itself another key or let another program connect',
    keyOnly: true,
    verbs: 'issue|create|generate|make|give|get|mint|connect|pair|authorize|authorise|allow|approve',
    about: /\b(key|token|credential|program|client|app|application|device|connection)s?\b/i,
    where: 'A signed-in owner issues keys and approves new connections in the dashboard (/connect).',
  },
  {
    rule: 7,
    what: 'change the e-mail or delete the account',
    verbs: 'change|update|set|replace|delete|close|remove|cancel|terminate',
    about: /\b(e-?mail|account)\b/i,
    where: 'The account is managed by its owner in the dashboard.',
  },
  {
    rule: 7,
    what: 'manage the team',
    verbs: 'remove|kick|promote|demote|manage|change|add',
    about:
      /\b(to|from|in|of|on) (the|my|our) team\b|\bteam ?mates?\b|\bteam members?\b|\bcolleagues?\b|\b(manage|change)\b.*\b(team|roles?)\b/i,
    where: 'The team is managed by the owner in the dashboard.',
  },
  {
    rule: 7,
    what: 'delete an agent or reissue its keys',
    verbs: 'delete|remove|destroy|erase|drop|reissue|re-issue|rotate|regenerate|reset|renew',
    about:
      /\b(the|this|that|my|our|an?|every|all)\s+(agent|bot)s?\b|\b(agent|bot)s?\s+(named|called|["'«]|\w+_|[A-Z])|^\W*\w+\s+(agent|bot)s?\b|\b(keys?|secrets?)\b/,
    where: 'Agents are deleted and their keys reissued by the owner in the dashboard.',
  },
  {
    rule: 7,
    what: 'reply to a customer in their conversation',
    verbs: 'reply|respond|answer|write|message|send',
    about: /\b(customer|visitor|client|conversation|chat|thread|ticket)s?\b/i,
    where: 'Operators reply to customers in the dashboard inbox or through the operator API.',
  },
  {
    rule: 7,
    what: 'approve an action waiting for permission',
    verbs: 'approve|accept|allow|permit|confirm|reject|deny|decline',
    about: /\b(action|approval|request|call|payment|refund)s?\b/i,
    where: 'Actions waiting for permission are approved or rejected by a signed-in person in the dashboard.',
  },
];

/** Words before the verb that keep a sentence a request to the builder. */
const POLITE = String.raw`(?:(?:please|pls|now|then|and|also|ok|okay|hey|hi)[,\s]+)*(?:(?:can|could|would|will) you\s+|i (?:want|need|would like|'d like) (?:you )?to\s+|go ahead and\s+|try to\s+)?(?:please\s+)?`;

function requestPattern(verbs: string): RegExp {
  return new RegExp(`^\\s*${POLITE}(?:${verbs})\\b`, 'i');
}

const COMPILED = REFUSALS.map((r) => ({ ...r, verb: requestPattern(r.verbs) }));

/**
 * The refusal for a message asking for something the builder never does (for this principal), or null. Applies to
 * the whole message: "Add this FAQ. Then invite Ann to the team." is refused as a whole, so nothing half-happens.
 */
export function refusalFor(message: string, principal: BuilderPrincipal): string | null {
  // Only requests are screened: sentences that start with the verb. Text the owner dictates (instructions that say
  // "reply to customers politely") starts otherwise and reaches the model.
  // Sentences end at . ! ? (followed by a space or the end: not the dots of an address), ; and new lines.
  const sentences = message.split(/[.!?]+(?=\s|$)|[;\n]+/);
  for (const r of COMPILED) {
    if (r.keyOnly && principal.kind !== 'builder_key') continue;
    if (!sentences.some((s) => r.verb.test(s) && r.about.test(s))) continue;
    const who =
      r.rule === 6
        ? 'The builder does not'
        : principal.kind === 'builder_key'
          ? 'A program connected with a builder key cannot'
          : 'The builder cannot';
    return `${who} ${r.what}, so nothing was changed. ${r.where}`;
  }
  return null;
}
