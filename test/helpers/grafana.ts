/**
 * The Grafana dashboard of docs/operations/grafana-dashboard.json as the tests read it: its panels'
 * PromQL expressions and the metric names they use.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MetricFamily } from './prometheus.ts';

export const DASHBOARD_PATH = fileURLToPath(new URL('../../docs/operations/grafana-dashboard.json', import.meta.url));

interface Panel {
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly { readonly expr?: string }[];
  readonly panels?: readonly Panel[];
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly type: string; readonly query?: unknown }[] };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

/** Every panel, rows' nested ones included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Every PromQL expression of every panel, with its panel's title. */
export function expressions(dashboard: Dashboard): { readonly panel: string; readonly expr: string }[] {
  return allPanels(dashboard).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr ?? '' })));
}

/** Words of PromQL that are not metric names: grouping and set operators, modifiers. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

/**
 * The metric names an expression selects: what is left once label matchers (`{...}`), ranges
 * (`[...]`), grouping label lists, strings and numbers are taken out, and names followed by `(`
 * (functions and aggregations) are skipped.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(\.\d+)?([eE][-+]?\d+)?\b/g, ' ');
  const names: string[] = [];
  for (const match of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const name = match[1]!;
    if (match[2] === undefined && !KEYWORDS.has(name)) names.push(name);
  }
  return [...new Set(names)];
}

/** Family names, and their series' names (a histogram's `_bucket`, `_sum`, `_count`). */
export function reportedNames(families: ReadonlyMap<string, MetricFamily>): Set<string> {
  const names = new Set<string>();
  for (const f of families.values()) {
    names.add(f.name);
    if (f.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(f.name + suffix);
    for (const s of f.samples) names.add(s.name);
  }
  return names;
}
