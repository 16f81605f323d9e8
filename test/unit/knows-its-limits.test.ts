import { describe, expect, it } from '@jest/globals';
import { CANNOT_ANSWER_TOOL, gaveUp, unansweredOutcome, unansweredText } from '../../lib/runs/limits';

describe('an agent that knows its limits', () => {
  it('does what the owner chose only with handoff on', () => {
    expect(unansweredOutcome({ handoffEnabled: true, whenUnanswered: 'offer' })).toBe('offer');
    expect(unansweredOutcome({ handoffEnabled: true, whenUnanswered: 'hand_over' })).toBe('hand_over');
    expect(unansweredOutcome({ handoffEnabled: false, whenUnanswered: 'hand_over' })).toBe('said');
    // A run context recorded before the settings existed.
    expect(unansweredOutcome(undefined)).toBe('said');
  });

  it("keeps the model's own words (the visitor may have read them) and adds what happens next", () => {
    expect(unansweredText('offer', 'Our catalogue does not list that.')).toBe(
      'Our catalogue does not list that.\n\nWould you like to talk to a person from the team?',
    );
    expect(unansweredText('said', 'Our catalogue does not list that.')).toBe('Our catalogue does not list that.');
    expect(unansweredText('hand_over')).toBe(
      "I'm sorry, I can't answer that from what I know. I've asked a person from the team to help; they will reply here.",
    );
  });

  it('gives up only through its tool; other tool calls go on', () => {
    const call = (name: string) => ({ id: name, name, arguments: '{}' });
    expect(gaveUp([call(CANNOT_ANSWER_TOOL)])).toEqual({ gaveUp: true, others: [] });
    expect(gaveUp([call('lookup_order'), call(CANNOT_ANSWER_TOOL)])).toEqual({
      gaveUp: true,
      others: [call('lookup_order')],
    });
    expect(gaveUp([call('lookup_order')])).toEqual({ gaveUp: false, others: [call('lookup_order')] });
  });
});
