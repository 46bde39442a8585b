import type { Json, JsonObject } from '../../server/src/openapi/document.ts';

/** Renders the OpenAPI document as the reference page `docs/reference/api.md`. */

const AUTH_NAMES: Readonly<Record<string, string>> = {
  appBasic: 'HTTP Basic: App ID and App Secret',
  consoleSession: 'Bearer console session token (`cs_…`)',
  signalingToken: 'Bearer signaling token',
};

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const asObject = (v: Json | undefined): JsonObject => (isObject(v) ? v : {});
const asArray = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);
const asString = (v: Json | undefined): string => (typeof v === 'string' ? v : '');

/** Table cells: no raw pipes or line breaks. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
const code = (text: string): string => `\`${text}\``;
/** The id GitHub gives a heading: lower case, letters, digits, `_` and `-` kept, spaces to `-`. */
const anchor = (text: string): string => text.toLowerCase().replace(/[^a-z0-9 _-]/g, '').trim().replace(/ /g, '-');
const refName = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1);
const schemaLink = (name: string): string => `[${name}](#schema-${anchor(name)})`;

function range(min: Json | undefined, max: Json | undefined, unit = ''): string | undefined {
  if (typeof min === 'number' && typeof max === 'number') return `${min} to ${max}${unit}`;
  if (typeof min === 'number') return `at least ${min}${unit}`;
  if (typeof max === 'number') return `at most ${max}${unit}`;
  return undefined;
}

/** A one-line type with its rules: `integer, 1 to 3600`, `one of "a", "b"`, `array of [Quote](#…)`. */
export function describeType(schema: JsonObject): string {
  if (typeof schema['$ref'] === 'string') return schemaLink(refName(schema['$ref']));
  if (schema['const'] !== undefined) return `${code(JSON.stringify(schema['const']))}`;
  if (Array.isArray(schema['enum'])) return `one of ${schema['enum'].map((v) => code(JSON.stringify(v))).join(', ')}`;
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) return [...new Set(schema[key].map((s) => describeType(asObject(s))))].join(' or ');
  }
  if (schema['type'] === 'null') return 'null';
  const types = Array.isArray(schema['type']) ? schema['type'].map(String) : [asString(schema['type']) || 'any'];
  const parts: string[] = [];
  const main = types.filter((t) => t !== 'null');
  for (const type of main) {
    if (type === 'array') {
      const items = asObject(schema['items']);
      const bounds = range(schema['minItems'], schema['maxItems'], ' items');
      parts.push([`array of ${describeType(items)}`, bounds, schema['uniqueItems'] === true ? 'unique' : undefined].filter(Boolean).join(', '));
    } else if (type === 'integer' || type === 'number') {
      const min = schema['minimum'];
      const max = schema['maximum'];
      const safe = typeof max === 'number' && max >= Number.MAX_SAFE_INTEGER;
      const bounds = range(typeof min === 'number' && min <= -Number.MAX_SAFE_INTEGER ? undefined : min, safe ? undefined : max);
      parts.push([type, bounds].filter(Boolean).join(', '));
    } else if (type === 'string') {
      const rules = [range(schema['minLength'], schema['maxLength'], ' characters'),
        typeof schema['pattern'] === 'string' ? `pattern ${code(schema['pattern'])}` : undefined];
      parts.push(['string', ...rules].filter(Boolean).join(', '));
    } else {
      parts.push(type);
    }
  }
  const text = parts.join(' or ');
  return types.includes('null') ? `${text} or null` : text;
}

interface FieldRow { name: string; type: string; required: boolean; description: string }

/**
 * Flattens an object schema into rows: nested objects as `a.b`, arrays of objects as `a[].b`; named
 * schemas link. The variants of a union are merged: a field's types are joined, and it is required
 * only when every variant requires it.
 */
function fieldRows(schema: JsonObject, prefix = '', depth = 0): FieldRow[] {
  const variants = [...asArray(schema['anyOf']), ...asArray(schema['oneOf'])].map(asObject).filter((v) => isObject(v['properties']));
  const shapes = variants.length > 0 ? variants : [schema];
  const names: string[] = [];
  for (const shape of shapes) for (const name of Object.keys(asObject(shape['properties']))) if (!names.includes(name)) names.push(name);
  const rows: FieldRow[] = [];
  for (const name of names) {
    const props = shapes.map((shape) => asObject(shape['properties'])[name]).filter(isObject);
    const prop = props[0] ?? {};
    const full = `${prefix}${name}`;
    rows.push({
      name: full,
      type: [...new Set(props.map(describeType))].join(' or '),
      required: shapes.every((shape) => asArray(shape['required']).includes(name)),
      description: asString(prop['description']),
    });
    if (depth > 4 || props.length !== 1 || typeof prop['$ref'] === 'string') continue;
    const items = asObject(prop['items']);
    if (isObject(prop['properties']) || Array.isArray(prop['anyOf']) || Array.isArray(prop['oneOf'])) {
      rows.push(...fieldRows(prop, `${full}.`, depth + 1));
    } else if (isObject(items['properties']) || Array.isArray(items['anyOf']) || Array.isArray(items['oneOf'])) {
      rows.push(...fieldRows(items, `${full}[].`, depth + 1));
    } else if (isObject(prop['additionalProperties'])) {
      rows.push({ name: `${full}.*`, type: describeType(asObject(prop['additionalProperties'])), required: false, description: '' });
    }
  }
  return rows;
}

function fieldTable(schema: JsonObject): string[] {
  const rows = fieldRows(schema);
  if (rows.length === 0) return [`Type: ${describeType(schema)}`, ''];
  return [
    '| field | type | required | notes |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${code(r.name)} | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`),
    '',
  ];
}

function bodySchemaName(content: Json | undefined): { name?: string; schema: JsonObject } {
  const schema = asObject(asObject(asObject(content)['application/json'])['schema']);
  if (typeof schema['$ref'] === 'string') return { name: refName(schema['$ref']), schema };
  return { schema };
}

/** The events of a stream's `x-event-schema`: a union of `{event, id?, data}` objects. */
function eventTable(eventSchema: JsonObject, schemas: JsonObject): string[] {
  const union = typeof eventSchema['$ref'] === 'string' ? asObject(schemas[refName(eventSchema['$ref'])]) : eventSchema;
  const variants = [...asArray(union['oneOf']), ...asArray(union['anyOf'])].map(asObject);
  if (variants.length === 0) return [];
  const link = typeof eventSchema['$ref'] === 'string' ? ` (${schemaLink(refName(eventSchema['$ref']))})` : '';
  return [
    `Events${link}:`,
    '',
    '| event | id | data | sent |',
    '| --- | --- | --- | --- |',
    ...variants.map((v) => {
      const props = asObject(v['properties']);
      const name = asObject(props['event'])['const'];
      const numbered = asArray(v['required']).includes('id') ? 'yes' : 'none';
      return `| ${code(String(name))} | ${numbered} | ${cell(describeType(asObject(props['data'])))} | ${cell(asString(v['description']))} |`;
    }),
    '',
  ];
}

function renderOperation(method: string, path: string, op: JsonObject, schemas: JsonObject): string[] {
  const out: string[] = [];
  out.push(`### ${method.toUpperCase()} ${path}`, '');
  out.push(`${asString(op['summary'])}.`, '');
  const security = asArray(op['security']).map((s) => Object.keys(asObject(s))[0] ?? '');
  const bodyToken = op['x-body-token'];
  const auth = security.length > 0 ? security.map((s) => AUTH_NAMES[s] ?? s).join(' or ')
    : typeof bodyToken === 'string' ? `signaling token in the body field ${code(bodyToken)}` : 'none';
  const hosts = asArray(op['x-hosts']).map(String).join(', ');
  out.push(`- Operation: ${code(asString(op['operationId']))}`, `- Hosts: ${hosts}`, `- Authentication: ${auth}`);
  if (typeof op['x-max-body-bytes'] === 'number') out.push(`- Body limit: ${op['x-max-body-bytes']} bytes`);
  out.push('');
  if (op['description'] !== undefined) out.push(asString(op['description']), '');

  const params = asArray(op['parameters']).map(asObject);
  if (params.length > 0) {
    out.push('| parameter | in | type | required | notes |', '| --- | --- | --- | --- | --- |');
    for (const p of params) {
      out.push(`| ${code(asString(p['name']))} | ${asString(p['in'])} | ${cell(describeType(asObject(p['schema'])))} | ${p['required'] === true ? 'yes' : 'no'} | ${cell(asString(p['description']))} |`);
    }
    out.push('');
  }

  const body = asObject(op['requestBody']);
  if (isObject(body['content'])) {
    const { name, schema } = bodySchemaName(body['content']);
    out.push(`Request body: ${name ? schemaLink(name) : describeType(schema)}`, '');
    const example = asObject(asObject(body['content'])['application/json'])['example'];
    if (example !== undefined) out.push('```json', JSON.stringify(example, null, 2), '```', '');
  }

  out.push('| status | meaning | body |', '| --- | --- | --- |');
  const events: string[] = [];
  for (const [status, raw] of Object.entries(asObject(op['responses']))) {
    const response = asObject(raw);
    const content = asObject(response['content']);
    const media = Object.keys(content)[0];
    let bodyText = 'none';
    if (media !== undefined) {
      const schema = asObject(asObject(content[media])['schema']);
      const allOf = asArray(schema['allOf']).map(asObject);
      bodyText = allOf.length > 0 ? schemaLink('Error') : describeType(schema);
      if (media !== 'application/json') bodyText = `${code(media)}: ${bodyText}`;
      const eventSchema = asObject(content[media])['x-event-schema'];
      if (isObject(eventSchema)) events.push(...eventTable(eventSchema, schemas));
    }
    const headers = Object.keys(asObject(response['headers']));
    const meaning = asString(response['description']) + (headers.length > 0 ? `; headers: ${headers.join(', ')}` : '');
    out.push(`| ${status} | ${cell(meaning)} | ${cell(bodyText)} |`);
  }
  out.push('', ...events);
  return out;
}

/** The whole reference page. */
export function renderApiMarkdown(doc: JsonObject): string {
  const info = asObject(doc['info']);
  const paths = asObject(doc['paths']);
  const schemas = asObject(asObject(doc['components'])['schemas']);
  const out: string[] = [
    `# ${asString(info['title'])} reference (${asString(info['version'])})`,
    '',
    '<!-- Generated by `npx tsx scripts/gen-api-docs.ts` from the operation records (server/src/*/operations.ts). Do not edit. -->',
    '',
    `The same content as [openapi.json](openapi.json) (OpenAPI ${asString(doc['openapi'])}), which every api host also serves at \`GET /v1/openapi.json\`.`,
    '',
    asString(info['description']),
    '',
    '## Hosts',
    '',
    '| server | default | serves |',
    '| --- | --- | --- |',
    ...asArray(doc['servers']).map(asObject).map((s) => {
      const variable = Object.values(asObject(s['variables']))[0];
      return `| ${code(asString(s['url']))} | ${code(asString(asObject(variable)['default']))} | ${cell(asString(s['description']))} |`;
    }),
    '',
    '## Authentication',
    '',
    ...Object.entries(asObject(asObject(doc['components'])['securitySchemes'])).map(([name, raw]) =>
      `- ${AUTH_NAMES[name] ?? name}: ${asString(asObject(raw)['description'])}`),
    '',
    '## Operations',
    '',
    '| method | path | hosts | summary |',
    '| --- | --- | --- | --- |',
  ];
  const byTag = new Map<string, string[]>();
  for (const [path, rawItem] of Object.entries(paths)) {
    for (const [method, rawOp] of Object.entries(asObject(rawItem))) {
      const op = asObject(rawOp);
      const heading = `${method.toUpperCase()} ${path}`;
      out.push(`| ${method.toUpperCase()} | [${cell(path)}](#${anchor(heading)}) | ${asArray(op['x-hosts']).map(String).join(', ')} | ${cell(asString(op['summary']))} |`);
      const tag = asString(asArray(op['tags'])[0]);
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...renderOperation(method, path, op, schemas)]);
    }
  }
  out.push('');
  for (const tag of asArray(doc['tags']).map((t) => asString(asObject(t)['name']))) {
    out.push(`## ${tag}`, '', ...(byTag.get(tag) ?? []));
  }
  out.push('## Schemas', '');
  for (const [name, raw] of Object.entries(asObject(asObject(doc['components'])['schemas']))) {
    out.push(`<a id="schema-${anchor(name)}"></a>`, '', `### ${name}`, '', ...fieldTable(asObject(raw)));
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
