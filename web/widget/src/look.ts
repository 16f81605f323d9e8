/**
 * The owner's look for the widget (docs/widget.md, "Its look") as the CSS variables the styles read: the accent, a
 * darker shade for hover, a pale one for soft backgrounds, and the text colour that stays readable on the accent (dark
 * on a light accent such as yellow, white otherwise). DOM-free.
 */
const HEX = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i;

function rgb(color: string): [number, number, number] | null {
  const m = HEX.exec(color);
  return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : null;
}

const hex = (c: number[]) =>
  `#${c
    .map((v) =>
      Math.round(Math.min(255, Math.max(0, v)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;

/** WCAG relative luminance of an sRGB colour. */
function luminance([r, g, b]: [number, number, number]): number {
  const lin = (v: number) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG contrast ratio between two luminances. */
const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

const DARK_TEXT = '#1c1f2a';

/** The variables for an accent colour; none (the stylesheet's own) for anything that is not `#rrggbb`. */
export function accentVariables(color: string): Record<string, string> {
  const c = rgb(color);
  if (!c) return {};
  const lum = luminance(c);
  const onAccent = contrast(lum, 1) >= contrast(lum, luminance(rgb(DARK_TEXT)!)) ? '#fff' : DARK_TEXT;
  return {
    '--accent': color.toLowerCase(),
    '--accent-dark': hex(c.map((v) => v * 0.85)),
    '--accent-soft': hex(c.map((v) => v + (255 - v) * 0.9)),
    '--on-accent': onAccent,
  };
}

/** Who a person's reply is from, as the label above it reads: "Ana from Acme support", "From the team". */
export function fromLabel(teamName: string | null | undefined, authorName?: string | null): string {
  const team = teamName || 'the team';
  return authorName ? `${authorName} from ${team}` : `From ${team}`;
}
