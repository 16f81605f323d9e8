/** What the widget says to a visitor who asked for a person (web/widget/src/team.ts): DOM-free. */
import { describe, expect, it, jest } from '@jest/globals';
// The widget's sources are an ES module package; the type comes from there, the code through Jest (as page-context).
import type * as TeamModule from '../../web/widget/src/team.js' with { 'resolution-mode': 'import' };

const { handoffNotice, typicalWait } = jest.requireActual<typeof TeamModule>('../../web/widget/src/team');

describe('asking for a person', () => {
  it('says how soon the team usually replies, in words', () => {
    expect(typicalWait(20)).toBe('within a minute');
    expect(typicalWait(60)).toBe('within about 1 minute');
    expect(typicalWait(250)).toBe('within about 4 minutes');
    expect(typicalWait(89 * 60)).toBe('within about 89 minutes');
    expect(typicalWait(2 * 3600 + 600)).toBe('within about 2 hours');
  });

  it('promises a reply in the chat when someone is there, with the usual wait when known', () => {
    expect(handoffNotice({ online: true, typical_reply_seconds: 250 })).toEqual({
      text: 'You asked for a person. Someone from the team will reply here, in this chat, usually within about 4 minutes.',
      leaveContact: false,
    });
    expect(handoffNotice({ online: true, typical_reply_seconds: null }).text).toBe(
      'You asked for a person. Someone from the team will reply here, in this chat.',
    );
    // An API that does not say (older): the plain promise.
    expect(handoffNotice(undefined).leaveContact).toBe(false);
  });

  it('offers the contact form when nobody is there', () => {
    const said = handoffNotice({ online: false, typical_reply_seconds: 250 });
    expect(said.leaveContact).toBe(true);
    expect(said.text).toMatch(/^Nobody from the team is online right now\. Leave your contact/);
  });
});
