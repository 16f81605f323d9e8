/**
 * The satisfaction question a person's resolution raises in the widget (docs/widget.md), apart from the DOM: asked
 * while the poll says so (`satisfaction_asked`), answered once, thanked.
 */
export interface SatisfactionAsked {
  /** When a person resolved the conversation (Unix ms): one question per resolution. */
  resolvedAt: number;
  /** The visitor answered: the widget thanks them instead of asking. */
  answered: boolean;
}

/**
 * The question after a poll: asked while the poll says so; an answer given stays thanked until the question goes (the
 * visitor wrote again) or another resolution asks anew.
 */
export function satisfactionAfter(
  current: SatisfactionAsked | null,
  asked: { resolved_at: number } | undefined,
): SatisfactionAsked | null {
  if (asked) {
    return current?.resolvedAt === asked.resolved_at ? current : { resolvedAt: asked.resolved_at, answered: false };
  }
  return current?.answered ? current : null;
}
