import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort } from '../../stack/processes';

/** Where this machine's ephemeral ports begin (the local ends of outgoing connections). */
const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

function listenOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

describe('freePort (stack/processes.ts): the ports the stack starts its parts on', () => {
  // First in the file: no port below 10100 was handed out yet.
  it('skips a port something already listens on', async () => {
    const taken = await Promise.all(Array.from({ length: 50 }, (_, i) => listenOn(10_000 + 2 * i).catch(() => null)));
    try {
      for (let i = 0; i < 10; i++) {
        const port = await freePort(10_100);
        expect(port).toBeGreaterThanOrEqual(10_000);
        expect(port).toBeLessThan(10_100);
        expect(port % 2 === 0 ? taken[(port - 10_000) / 2] : null).toBeNull(); // an even one only if its listen failed here
      }
    } finally {
      await Promise.all(taken.filter((s) => s !== null).map((s) => new Promise((r) => s.close(r))));
    }
  });

  it('gives ports below the ephemeral range, so no outgoing connection can take one before its part listens', async () => {
    const ports = [];
    for (let i = 0; i < 40; i++) ports.push(await freePort());
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart);
    }
    // Never the same twice in one process, and each one can be listened on.
    expect(new Set(ports).size).toBe(ports.length);
    const servers = await Promise.all(ports.slice(0, 5).map(listenOn));
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('keeps under a limit when asked (the real server stores its membership port as a smallint)', async () => {
    for (let i = 0; i < 20; i++) expect(await freePort(12_000)).toBeLessThan(12_000);
  });
});
