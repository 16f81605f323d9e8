/** What the widget's panel says under its title (web/widget/src/wording.ts), and the image limits it states. */
import { describe, expect, it, jest } from '@jest/globals';
import { LIMITS } from '../../lib/limits';

/** Typed by what the test uses of it (the widget's files import each other without extensions). */
type State = {
  status: string;
  operatorHere: boolean;
  afterHours: { backAt: number | null } | null;
  unavailable: string | null;
  config: object | null;
};
const { statusLine, teamAway, megabytes, uploadRefusal } = jest.requireActual<{
  statusLine(state: State): string;
  teamAway(state: State): boolean;
  megabytes(bytes?: number): string;
  uploadRefusal(status: number, limits: { max_bytes: number } | undefined): string | undefined;
}>('../../web/widget/src/wording');

const state = (over: Partial<State>): State => ({
  status: 'bot',
  operatorHere: false,
  afterHours: null,
  unavailable: null,
  config: {},
  ...over,
});

describe("the widget's status line", () => {
  it('says where the conversation stands with a person', () => {
    expect(statusLine(state({}))).toBe('We usually answer right away');
    expect(statusLine(state({ config: null }))).toBe('Connecting…');
    expect(statusLine(state({ unavailable: 'No such bot' }))).toBe('Unavailable');
    expect(statusLine(state({ status: 'waiting' }))).toBe('Waiting for a person…');
    expect(statusLine(state({ status: 'waiting', operatorHere: true }))).toBe('Someone from the team is reading');
    expect(statusLine(state({ status: 'operator' }))).toBe('You are chatting with a person');
  });

  it('says the team is away while a hand-over outside the hours waits for them, until they are back', () => {
    const later = Date.now() + 3_600_000;
    expect(teamAway(state({ status: 'waiting', afterHours: { backAt: later } }))).toBe(true);
    expect(teamAway(state({ status: 'waiting', afterHours: { backAt: null } }))).toBe(true);
    expect(teamAway(state({ status: 'waiting', afterHours: { backAt: Date.now() - 1000 } }))).toBe(false);
    expect(teamAway(state({ status: 'operator', afterHours: { backAt: later } }))).toBe(false);
    expect(statusLine(state({ status: 'waiting', afterHours: { backAt: null } }))).not.toBe('Waiting for a person…');
  });

  it("states the API's image limit when the configuration has not said it", () => {
    expect(megabytes()).toBe(`${LIMITS.widget.attachmentBytes / 1024 / 1024} MB`);
    expect(uploadRefusal(413, undefined)).toBe(`That image is too large. Images can be up to ${megabytes()}.`);
  });
});
