/** A failed scan said in plain words (web/dashboard/src/pages/agent/scan-words.ts). */
import { describe, expect, it, jest } from '@jest/globals';
// The dashboard's sources are an ES module package: the type from there, the code through Jest.
import type * as Words from '../../web/dashboard/src/pages/agent/scan-words.js' with { 'resolution-mode': 'import' };

const { parsePatterns, scanProblem, scanScope } = jest.requireActual<typeof Words>(
  '../../web/dashboard/src/pages/agent/scan-words',
);

describe('scan problems in plain words', () => {
  it('names the site and says what to do, by the scan’s code', () => {
    expect(scanProblem('network', 'https://shop.example.com/start')).toEqual({
      title: 'shop.example.com could not be reached.',
      hint: 'Check the address for typos, and that the site is online.',
    });
    expect(scanProblem('http_404', 'https://shop.example.com/')?.title).toBe(
      'The start page was not found (HTTP 404).',
    );
    expect(scanProblem('http_503', 'https://shop.example.com/')?.title).toBe(
      'shop.example.com had an error (HTTP 503).',
    );
    expect(scanProblem('http_403', 'https://shop.example.com/')?.hint).toMatch(/public page/);
    expect(scanProblem('robots', 'https://shop.example.com/')?.title).toMatch(/robots\.txt/);
    expect(scanProblem('cancelled', 'https://shop.example.com/')?.title).toBe(
      'This scan was stopped before it finished.',
    );
    expect(scanProblem('robots_unreachable', 'https://shop.example.com/')?.title).toMatch(
      /^shop\.example\.com could not be reached/,
    );
    expect(scanProblem('no_text', 'https://shop.example.com/')?.hint).toMatch(/by hand/);
    expect(scanProblem('no_match', 'https://shop.example.com/')?.title).toBe(
      'No page of the site matched the path patterns.',
    );
  });

  it('has nothing to say without a code, and something general for a code it does not know', () => {
    expect(scanProblem(null, 'https://shop.example.com/')).toBeNull();
    expect(scanProblem('', 'https://shop.example.com/')).toBeNull();
    expect(scanProblem('something_new', 'https://shop.example.com/')?.title).toBe(
      'The scan found nothing it could add.',
    );
    // An address the crawler refused is named as typed.
    expect(scanProblem('network', 'not a url')?.title).toBe('not a url could not be reached.');
  });
});

describe('path patterns as owners type them, and a scan’s scope in one line', () => {
  it('splits on commas and spaces, drops blanks and repeats', () => {
    expect(parsePatterns(' /docs/*, /help/*\n/docs/*  /faq ')).toEqual(['/docs/*', '/help/*', '/faq']);
    expect(parsePatterns('  ')).toEqual([]);
  });

  it('names the patterns and what the sitemap gave, or nothing', () => {
    expect(scanScope({ include: ['/docs/*'], exclude: ['/docs/old/*'], sitemap_urls: 12 })).toBe(
      'Only /docs/* · skipping /docs/old/* · 12 pages from the sitemap',
    );
    expect(scanScope({ include: [], exclude: ['/blog/*'], sitemap_urls: 1 })).toBe(
      'Skipping /blog/* · 1 page from the sitemap',
    );
    expect(scanScope({ include: [], exclude: [], sitemap_urls: 0 })).toBeNull();
  });
});
