import { describe, expect, it } from '@jest/globals';
import { extractiveBriefing } from '../../lib/conversations/briefing';

describe("the operator's briefing", () => {
  it("quotes the visitor's first and latest words and the agent's last answer, cut at a word", () => {
    const long = `My order ${'is really very late '.repeat(20)}`;
    const text = extractiveBriefing([
      { author: 'visitor', text: 'Where is\n my order?' },
      { author: 'bot', text: 'It ships today.' },
      { author: 'bot', text: 'Anything else?' },
      { author: 'visitor', text: long },
    ]);
    const [asked, latest, answer] = text.split('\n');
    expect(asked).toBe('Asked: “Where is my order?”');
    expect(latest.length).toBeLessThan(220);
    expect(latest).toMatch(/^Latest: “My order is really( very late is really)+…”$/);
    expect(answer).toBe("The agent's last answer (of 2): “Anything else?”");
  });
});
