/**
 * The samples of one metric family in a Prometheus text exposition, keyed by their label set as
 * written (`''` for a sample without labels).
 */
export function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m && m[1] === name) found.set(m[2] ?? '', Number(m[3]));
  }
  return found;
}
