/**
 * Detects a visitor explicitly asking for a person (contract, Conversation status: "visitor explicitly asks for an
 * operator in text"). Deliberately narrow: phrases that name a human, an operator or an agent together with a
 * request to talk, in several languages. A question *about* people ("who founded the company?") must not hand
 * the conversation over, so single words like "human" alone do not count.
 */
const PATTERNS: RegExp[] = [
  // English
  /\b(talk|speak|chat|connect|transfer|put)\b[^.?!]{0,30}\b(human|person|operator|agent|representative|someone real|real person|staff|support team|manager)\b/i,
  /\b(human|live|real)\s+(agent|person|operator|support|being)\b/i,
  /\b(get|want|need)\s+(me\s+)?(a|an)\s+(human|operator|real person)\b/i,
  /^\s*(operator|human|agent|representative)\s*[.!?]*\s*$/i,
  // Russian
  /(позов|соедин|переключ|свяж|хочу|нужен|дайте|позвать)[а-яё]*[^.?!]{0,30}(оператор|человек|менеджер|специалист|сотрудник)/i,
  /живо(й|го|му)\s+(человек|оператор)/i,
  /^\s*оператор\s*[.!?]*\s*$/i,
  // German
  /\b(mit|einen?|zum?)\s+(einem\s+)?(menschen|mitarbeiter(in)?|berater(in)?|operator)\b[^.?!]{0,20}\b(sprechen|reden|verbinden)\b/i,
  /\b(echten?|lebendigen?)\s+(menschen|mitarbeiter)\b/i,
  // French
  /\b(parler|discuter)\s+(à|a|avec)\s+(un|une)\s+(humain|personne|conseill(er|ère)|opérateur|agent)\b/i,
  /\b(vraie|réelle)\s+personne\b|\bpersonne\s+(réelle|humaine)\b/i,
  // Spanish
  /\b(hablar|comunicarme|contactar)\s+con\s+(un|una)\s+(humano|persona|agente|operador(a)?|asesor(a)?)\b/i,
  /\bpersona\s+real\b/i,
  // Portuguese
  /\bfalar\s+com\s+(um|uma)\s+(humano|pessoa|atendente|agente|operador(a)?)\b/i,
  // Italian
  /\bparlare\s+con\s+(un|una)\s+(umano|persona|operatore|operatrice|agente)\b/i,
];

export function asksForHuman(text: string): boolean {
  return PATTERNS.some((p) => p.test(text));
}
