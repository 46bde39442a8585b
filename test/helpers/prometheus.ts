/**
 * A strict parser of the Prometheus text exposition format 0.0.4: any line it does not understand,
 * a sample before or outside its family, a repeated series, a counter below zero, or a histogram
 * whose buckets are not cumulative or whose +Inf bucket differs from its count is an error.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string | undefined;
  readonly samples: readonly Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly MetricType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

export class ExpositionError extends Error {
  constructor(line: number, problem: string) {
    super(`line ${line}: ${problem}`);
    this.name = 'ExpositionError';
  }
}

interface Building {
  name: string;
  type: MetricType | undefined;
  help: string | undefined;
  samples: Sample[];
  series: Set<string>;
}

/** Parses a whole exposition; families by name. */
export function parsePrometheusText(text: string): ReadonlyMap<string, MetricFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError(text.split('\n').length, 'the exposition does not end with a newline');
  const families = new Map<string, Building>();
  const closed = new Set<string>();
  let current: Building | undefined;
  const family = (name: string, lineNo: number): Building => {
    if (current?.name === name) return current;
    if (closed.has(name) || families.has(name)) throw new ExpositionError(lineNo, `family ${name} is split`);
    if (current) closed.add(current.name);
    current = { name, type: undefined, help: undefined, samples: [], series: new Set() };
    families.set(name, current);
    return current;
  };

  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    const lineNo = i + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) {
        if (/^#\s*(HELP|TYPE)\b/.test(line)) throw new ExpositionError(lineNo, `malformed ${line}`);
        return; // a plain comment
      }
      const [, keyword, name = '', rest = ''] = meta;
      if (!METRIC_NAME.test(name)) throw new ExpositionError(lineNo, `bad metric name ${JSON.stringify(name)}`);
      const f = family(name, lineNo);
      if (keyword === 'HELP') {
        if (f.help !== undefined) throw new ExpositionError(lineNo, `second HELP for ${name}`);
        f.help = unescapeHelp(rest, lineNo);
      } else {
        if (f.type !== undefined) throw new ExpositionError(lineNo, `second TYPE for ${name}`);
        if (f.samples.length > 0) throw new ExpositionError(lineNo, `TYPE of ${name} after its samples`);
        if (!(TYPES as readonly string[]).includes(rest)) throw new ExpositionError(lineNo, `unknown type ${JSON.stringify(rest)}`);
        f.type = rest as MetricType;
      }
      return;
    }
    const sample = parseSample(line, lineNo);
    const owner = familyOf(sample.name, current);
    const f = owner ?? family(sample.name, lineNo);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (f.series.has(key)) throw new ExpositionError(lineNo, `repeated series ${key}`);
    f.series.add(key);
    checkSample(f, sample, lineNo);
    f.samples.push(sample);
  });

  const result = new Map<string, MetricFamily>();
  for (const f of families.values()) {
    const type = f.type ?? 'untyped';
    if (type === 'histogram') checkHistogram(f);
    result.set(f.name, { name: f.name, type, help: f.help, samples: f.samples });
  }
  return result;
}

/** The family the sample belongs to: the current one when the name is its own or one of its suffixed series. */
function familyOf(name: string, current: Building | undefined): Building | undefined {
  if (!current) return undefined;
  if (name === current.name) return current;
  const suffixes = current.type === 'histogram' ? ['_bucket', '_sum', '_count'] : current.type === 'summary' ? ['_sum', '_count'] : [];
  return suffixes.some((s) => name === current.name + s) ? current : undefined;
}

function checkSample(f: Building, sample: Sample, lineNo: number): void {
  if (f.type === 'counter' && !(sample.value >= 0)) throw new ExpositionError(lineNo, `counter ${sample.name} is ${sample.value}`);
  if (f.type === 'histogram') {
    if (sample.name === `${f.name}_bucket`) {
      if (sample.labels['le'] === undefined) throw new ExpositionError(lineNo, `bucket of ${f.name} without le`);
    } else if ('le' in sample.labels) {
      throw new ExpositionError(lineNo, `le on ${sample.name}`);
    }
    if (sample.name === f.name) throw new ExpositionError(lineNo, `histogram ${f.name} has a bare sample`);
  }
}

/** Per label set: buckets cumulative and sorted by le, a +Inf bucket equal to _count, and a _sum. */
function checkHistogram(f: Building): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name.endsWith('_bucket')) g.buckets.push([parseValue(le ?? '', 0), s.value]);
    else if (s.name.endsWith('_count')) g.count = s.value;
    else g.sum = s.value;
  }
  for (const [key, g] of groups) {
    const where = `histogram ${f.name}${key}`;
    if (g.count === undefined || g.sum === undefined) throw new Error(`${where} lacks _count or _sum`);
    for (let i = 1; i < g.buckets.length; i++) {
      const [prevLe, prev] = g.buckets[i - 1]!;
      const [le, value] = g.buckets[i]!;
      if (!(le > prevLe)) throw new Error(`${where}: buckets not sorted by le`);
      if (value < prev) throw new Error(`${where}: buckets not cumulative`);
    }
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${where} has no +Inf bucket`);
    if (last[1] !== g.count) throw new Error(`${where}: +Inf bucket ${last[1]} differs from _count ${g.count}`);
  }
}

function parseSample(line: string, lineNo: number): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new ExpositionError(lineNo, `not a sample: ${JSON.stringify(line)}`);
  const name = nameMatch[0];
  let pos = name.length;
  const labels: Record<string, string> = {};
  if (line[pos] === '{') {
    pos += 1;
    while (line[pos] !== '}') {
      const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(pos));
      if (!labelMatch) throw new ExpositionError(lineNo, `bad label name at column ${pos + 1}`);
      const label = labelMatch[0];
      if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new ExpositionError(lineNo, `reserved label name ${label}`);
      if (label in labels) throw new ExpositionError(lineNo, `label ${label} repeated`);
      pos += label.length;
      if (line.slice(pos, pos + 2) !== '="') throw new ExpositionError(lineNo, `expected =" after ${label}`);
      pos += 2;
      let value = '';
      for (;;) {
        const c = line[pos];
        if (c === undefined) throw new ExpositionError(lineNo, 'unterminated label value');
        pos += 1;
        if (c === '"') break;
        if (c === '\\') {
          const e = line[pos];
          pos += 1;
          if (e === '\\') value += '\\';
          else if (e === '"') value += '"';
          else if (e === 'n') value += '\n';
          else throw new ExpositionError(lineNo, `bad escape \\${e ?? ''} in a label value`);
        } else {
          value += c;
        }
      }
      labels[label] = value;
      if (line[pos] === ',') pos += 1;
      else if (line[pos] !== '}') throw new ExpositionError(lineNo, `expected , or } at column ${pos + 1}`);
    }
    pos += 1;
  }
  const rest = line.slice(pos);
  const tail = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!tail) throw new ExpositionError(lineNo, `expected " value [timestamp]" after ${name}, got ${JSON.stringify(rest)}`);
  return { name, labels, value: parseValue(tail[1] ?? '', lineNo) };
}

/**
 * A value as the text format defines it: a decimal float, or exactly `NaN`, `+Inf` or `-Inf`.
 * Spellings Go's ParseFloat would also take (`Nan`, `inf`, `Infinity`) are refused, as strict
 * parsers refuse them.
 */
function parseValue(raw: string, lineNo: number): number {
  if (raw === 'NaN') return Number.NaN;
  if (raw === '+Inf') return Number.POSITIVE_INFINITY;
  if (raw === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new ExpositionError(lineNo, `bad value ${JSON.stringify(raw)}`);
  return Number(raw);
}

function unescapeHelp(raw: string, lineNo: number): string {
  return raw.replace(/\\(.?)/g, (_m, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    throw new ExpositionError(lineNo, `bad escape \\${e} in HELP`);
  });
}

/**
 * Parses an exposition as strictly as `parsePrometheusText`, and also requires HELP and TYPE for
 * every family and no NaN anywhere: the platform never reports a value it did not measure.
 */
export function parseStrictExposition(text: string): ReadonlyMap<string, MetricFamily> {
  const families = parsePrometheusText(text);
  for (const f of families.values()) {
    if (f.help === undefined) throw new Error(`family ${f.name} has no HELP`);
    // metric names are [a-zA-Z0-9_:]: nothing to escape in a pattern
    if (!new RegExp(`^# TYPE ${f.name} `, 'm').test(text)) throw new Error(`family ${f.name} has no TYPE`);
    for (const s of f.samples) if (Number.isNaN(s.value)) throw new Error(`${s.name}${JSON.stringify(s.labels)} is NaN`);
  }
  return families;
}

/** The value of one series; throws when it is missing, so a test cannot pass on an absent metric. */
export function sampleValue(families: ReadonlyMap<string, MetricFamily>, name: string, labels: Readonly<Record<string, string>> = {}): number {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(s.labels);
      if (keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  throw new Error(`no series ${name}${JSON.stringify(labels)}`);
}

/** Every label value of every series. */
export function allLabelValues(families: ReadonlyMap<string, MetricFamily>): string[] {
  return [...families.values()].flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
}
