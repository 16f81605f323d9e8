import { createBuilderMcpEndpoint, withoutJsonModeWarning } from '../../api/mcp/endpoint';
import { createLogger } from '../../lib/logger';
import type { Services } from '../../lib/services';

describe("the builder's MCP endpoint at start", () => {
  afterEach(() => jest.restoreAllMocks());

  it("prints nothing about its JSON answers: the SDK's warning on json mode is held back", () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    // Making the endpoint calls no service: the SDK only builds its handler.
    const endpoint = createBuilderMcpEndpoint({ services: {} as Services, logger: createLogger('silent', 'test') });
    expect(typeof endpoint.handle).toBe('function');
    expect(warn).not.toHaveBeenCalled();
    expect(console.warn).toBe(warn);
  });

  it('lets every other warning through, and restores console.warn when the maker throws', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const made = withoutJsonModeWarning(() => {
      console.warn("responseMode: 'json' drops mid-call notifications. and more");
      console.warn('something else', 42);
      return 'made';
    });
    expect(made).toBe('made');
    expect(warn.mock.calls).toEqual([['something else', 42]]);
    expect(() =>
      withoutJsonModeWarning(() => {
        throw new Error('broken');
      }),
    ).toThrow('broken');
    expect(console.warn).toBe(warn);
  });
});
