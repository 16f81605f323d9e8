import { describe, expect, it } from '@jest/globals';
import { createStreamAssembler } from '../../lib/conversations/stream';

describe("the stream assembler (what the API shows of a turn's fragments)", () => {
  it('shows fragments in order and a repeated or overlapping one only for what is new', () => {
    const a = createStreamAssembler();
    expect(a.add({ o: 0, d: 'Hello' })).toBe('Hello');
    expect(a.add({ o: 0, d: 'Hello' })).toBe('');
    expect(a.add({ o: 3, d: 'lo, wor' })).toBe(', wor');
    expect(a.add({ o: 10, d: 'ld' })).toBe('ld');
    expect(a.shown).toBe('Hello, world');
    expect(a.diverged).toBe(false);
  });

  it('holds a fragment that arrives before the one it follows, and shows both when the gap closes', () => {
    const a = createStreamAssembler();
    expect(a.add({ o: 4, d: 'bar' })).toBe('');
    expect(a.add({ o: 7, d: '!' })).toBe('');
    expect(a.add({ o: 0, d: 'foo ' })).toBe('foo bar!');
  });

  it('shows nothing that contradicts what was shown, and says the stream diverged', () => {
    const a = createStreamAssembler();
    a.add({ o: 0, d: 'The shop opens at nine' });
    expect(a.add({ o: 0, d: 'We open at 9 am' })).toBe('');
    expect(a.diverged).toBe(true);
    expect(a.add({ o: 22, d: ' am' })).toBe('');
    expect(a.shown).toBe('The shop opens at nine');
  });
});
