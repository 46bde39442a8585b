import { z } from 'zod';
import { ROLES } from '@rtc/protocol';
import rawPlatform from './platform.v1.json' with { type: 'json' };
import { deepFreeze } from '../../core/freeze.ts';
import { CatalogError, duplicates, issueLines } from './catalog-error.ts';

const platformFileSchema = z.strictObject({
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  roles: z.array(z.strictObject({
    role: z.enum(ROLES),
    may_publish: z.boolean(),
    may_subscribe: z.boolean(),
    description: z.string().min(1).max(300),
  })),
  codecs: z.strictObject({
    audio: z.array(z.strictObject({
      name: z.string().min(1), mime_type: z.string().regex(/^audio\/[A-Za-z0-9.-]+$/),
      clock_rate: z.int().min(1), channels: z.int().min(1).max(8),
    })).min(1),
    video: z.array(z.strictObject({
      name: z.string().min(1), mime_type: z.string().regex(/^video\/[A-Za-z0-9.-]+$/), clock_rate: z.int().min(1),
    })).min(1),
  }),
  encryption: z.array(z.literal('aes-256-gcm')).min(1),
});

/** What the platform offers besides prices: roles and what each may do, codecs, encryption. */
export type PlatformData = z.output<typeof platformFileSchema>;

/** Validates the platform data: every role of the token API exactly once, and audience never publishes (docs/reference/token-api.md, "Roles"). */
export function parsePlatform(raw: unknown, file = 'platform'): PlatformData {
  const parsed = platformFileSchema.safeParse(raw);
  if (!parsed.success) throw new CatalogError(file, issueLines(parsed.error.issues));
  const data = parsed.data;
  const problems: string[] = [];
  const listed = data.roles.map((r) => r.role);
  for (const role of duplicates(listed)) problems.push(`role ${role} is listed twice`);
  for (const role of ROLES) if (!listed.includes(role)) problems.push(`role ${role} is missing`);
  if (data.roles.some((r) => r.role === 'audience' && r.may_publish)) problems.push('the audience role can never publish');
  for (const name of duplicates([...data.codecs.audio, ...data.codecs.video].map((c) => c.mime_type))) {
    problems.push(`codec ${name} is listed twice`);
  }
  if (problems.length > 0) throw new CatalogError(file, problems);
  return deepFreeze(data);
}

/** The platform data in force, validated when the process starts. */
export const PLATFORM: PlatformData = parsePlatform(rawPlatform, 'server/src/catalog/platform.v1.json');
