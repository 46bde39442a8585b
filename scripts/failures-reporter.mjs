// A test reporter that writes one line per failed or cancelled test (file, name, error), so that
// the end of a long run says what failed without searching the whole output (scripts/test.mjs).
export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    const error = details?.error;
    const cause = error?.cause ?? error;
    const message = String(cause?.message ?? cause ?? '').split('\n').slice(0, 3).join(' | ');
    yield `${file ?? '?'} :: ${name} :: ${error?.failureType ?? ''} ${message}\n`;
  }
}
