/** The owner's look as the widget's CSS variables (web/widget/src/look.ts): DOM-free. */
import { describe, expect, it, jest } from '@jest/globals';
// The widget's sources are an ES module package; the type comes from there, the code through Jest (as page-context).
import type * as LookModule from '../../web/widget/src/look.js' with { 'resolution-mode': 'import' };

const { accentVariables, fromLabel } = jest.requireActual<typeof LookModule>('../../web/widget/src/look');

describe("the widget's look", () => {
  it('turns the accent into the shades the styles use, with white text on a dark accent', () => {
    expect(accentVariables('#4F46E5')).toEqual({
      '--accent': '#4f46e5',
      '--accent-dark': '#433cc3', // 85 % of each channel
      '--accent-soft': '#ededfc', // 90 % of the way to white
      '--on-accent': '#fff',
    });
    expect(accentVariables('#0f766e')['--on-accent']).toBe('#fff');
  });

  it('keeps text readable on a light accent: dark text on yellow', () => {
    expect(accentVariables('#ffd400')['--on-accent']).toBe('#1c1f2a');
    expect(accentVariables('#ffffff')['--on-accent']).toBe('#1c1f2a');
  });

  it("leaves the stylesheet's own colours for anything that is not #rrggbb", () => {
    for (const bad of ['', 'red', '#fff', 'url(x)', '#12345g', '#1234567']) expect(accentVariables(bad)).toEqual({});
  });

  it("names the team on a person's reply", () => {
    expect(fromLabel('Acme support')).toBe('From Acme support');
    expect(fromLabel(null)).toBe('From the team');
    expect(fromLabel('')).toBe('From the team');
    // A reply from the dashboard names its writer (their first name).
    expect(fromLabel('Acme support', 'Ana')).toBe('Ana from Acme support');
    expect(fromLabel(null, 'Ana')).toBe('Ana from the team');
  });
});
