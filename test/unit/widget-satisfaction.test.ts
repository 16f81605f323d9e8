/** The widget's satisfaction question across polls (web/widget/src/satisfaction-state.ts): DOM-free. */
import { describe, expect, it, jest } from '@jest/globals';
// The widget's sources are an ES module package; the type comes from there, the code through Jest (as page-context).
import type * as SatisfactionState from '../../web/widget/src/satisfaction-state.js' with {
  'resolution-mode': 'import',
};

const { satisfactionAfter } = jest.requireActual<typeof SatisfactionState>('../../web/widget/src/satisfaction-state');

describe('the satisfaction question after a poll', () => {
  it('is asked while the poll says so, once per resolution', () => {
    const asked = satisfactionAfter(null, { resolved_at: 100 });
    expect(asked).toEqual({ resolvedAt: 100, answered: false });
    // The same resolution again: the same question (nothing typed into it is reset).
    expect(satisfactionAfter(asked, { resolved_at: 100 })).toBe(asked);
    // Another resolution asks anew, even after an answer.
    expect(satisfactionAfter({ resolvedAt: 100, answered: true }, { resolved_at: 200 })).toEqual({
      resolvedAt: 200,
      answered: false,
    });
  });

  it('goes when the poll stops asking, unless it was answered (the thanks stays)', () => {
    expect(satisfactionAfter({ resolvedAt: 100, answered: false }, undefined)).toBeNull();
    const thanked = { resolvedAt: 100, answered: true };
    expect(satisfactionAfter(thanked, undefined)).toBe(thanked);
    expect(satisfactionAfter(null, undefined)).toBeNull();
  });
});
