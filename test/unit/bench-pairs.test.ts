import { type LoadRow, comparePairs } from '../../bench/pairs';

const row = (cpu: number, ofIdeal: number, ffP50: number, byProcess: Record<string, number> = {}): LoadRow => ({
  visitors: 300,
  of_ideal: `${ofIdeal} %`,
  platform_cpu_ms_per_turn: cpu,
  cpu_ms_per_turn: { worker: cpu / 2, api: cpu / 4, ...byProcess },
  first_fragment_over_model_ms: { p50: ffP50, p99: ffP50 * 4 },
  errors: 0,
});

describe('comparing the load benchmark in pairs (bench/pairs.ts)', () => {
  it('gives each side its medians and each pair its difference, b − a', () => {
    const result = comparePairs([
      { a: row(17, 90, 200), b: row(16, 93, 150) },
      { a: row(18, 91, 250), b: row(16.5, 92, 160) },
      { a: row(16, 94, 120), b: row(15.5, 95, 100) },
    ]);
    expect(result.pairs).toBe(3);
    expect(result.a).toMatchObject({ platform_cpu_ms_per_turn: 17, of_ideal_percent: 91, first_fragment_p50_ms: 200 });
    expect(result.b).toMatchObject({ platform_cpu_ms_per_turn: 16, of_ideal_percent: 93, first_fragment_p50_ms: 150 });
    expect(result.a?.cpu_ms_per_turn).toEqual({ worker: 8.5, api: 4.25 });
    expect(result.b_minus_a).toEqual([
      { platform_cpu_ms_per_turn: -1, of_ideal_points: 3, first_fragment_p50_ms: -50 },
      { platform_cpu_ms_per_turn: -1.5, of_ideal_points: 1, first_fragment_p50_ms: -90 },
      { platform_cpu_ms_per_turn: -0.5, of_ideal_points: 1, first_fragment_p50_ms: -20 },
    ]);
    expect(result.cpu_verdict).toBe('b cheaper in every pair');
  });

  it("compares the burst's first fragments when both runs measured them", () => {
    const withBurst = (r: LoadRow, p50: number): LoadRow => ({
      ...r,
      burst_first_fragment_over_model_ms: { p50, p99: p50 * 2 },
      update_to_turn_start_ms: { p50: p50 / 10, p99: p50 / 5 },
    });
    const result = comparePairs([
      { a: withBurst(row(17, 90, 200), 4000), b: withBurst(row(16, 93, 150), 900) },
      { a: withBurst(row(18, 91, 250), 5000), b: withBurst(row(16.5, 92, 160), 1100) },
    ]);
    expect(result.a).toMatchObject({ burst_first_fragment_p50_ms: 4500, update_to_turn_start_p50_ms: 450 });
    expect(result.b).toMatchObject({ burst_first_fragment_p50_ms: 1000, burst_first_fragment_p99_ms: 2000 });
    expect(result.b_minus_a.map((d) => d.burst_first_fragment_p50_ms)).toEqual([-3100, -3900]);
  });

  it('calls pairs that disagree noise, and leaves out a pair whose run failed', () => {
    const result = comparePairs([
      { a: row(17, 90, 200), b: row(16, 93, 150) },
      { a: row(16, 90, 200), b: row(16.8, 93, 150) },
      { a: row(16, 90, 200) },
    ]);
    expect(result.pairs).toBe(2);
    expect(result.b_minus_a.map((d) => d.platform_cpu_ms_per_turn)).toEqual([-1, 0.8]);
    expect(result.a?.platform_cpu_ms_per_turn).toBe(16.5);
    expect(result.cpu_verdict).toBe('mixed: within the noise');
  });

  it('counts a process seen in only some runs as 0 in the others', () => {
    const result = comparePairs([
      { a: row(17, 90, 200, { other: 0.3 }), b: row(16, 93, 150) },
      { a: row(17, 90, 200), b: row(16, 93, 150) },
      { a: row(17, 90, 200), b: row(16, 93, 150) },
    ]);
    expect(result.a?.cpu_ms_per_turn).toEqual({ worker: 8.5, api: 4.25, other: 0 });
    expect(result.b?.cpu_ms_per_turn).toEqual({ worker: 8, api: 4 });
  });

  it('says so when b costs more in every pair, and when there is no whole pair', () => {
    expect(comparePairs([{ a: row(15, 95, 90), b: row(16, 95, 90) }]).cpu_verdict).toBe('b dearer in every pair');
    expect(comparePairs([{ b: row(16, 95, 90) }]).cpu_verdict).toBe('no pair');
  });
});
