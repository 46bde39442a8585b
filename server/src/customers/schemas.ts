import { z } from 'zod';
import type { CredentialCreate, CredentialPatch } from './credentials.ts';
import { MAX_TTL_SECONDS } from '@rtc/protocol';
import { parseCidr } from '../core/address.ts';
import { typeError } from '../http/validate.ts';

export const MAX_ALLOWLIST_ENTRIES = 100;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 256;

const email = z.string(typeError('email', 'a string'))
  .max(254, { error: 'email must be at most 254 characters' })
  .regex(/^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u, { error: 'email must be an e-mail address' });

const password = z.string(typeError('password', 'a string'))
  .min(MIN_PASSWORD_LENGTH, { error: `password must be at least ${MIN_PASSWORD_LENGTH} characters` })
  .max(MAX_PASSWORD_LENGTH, { error: `password must be at most ${MAX_PASSWORD_LENGTH} characters` });

export const registerSchema = z.strictObject({ email, password });
export const loginSchema = z.strictObject({
  email,
  password: z.string(typeError('password', 'a string')).max(MAX_PASSWORD_LENGTH, { error: 'password is too long' }),
});
export const passwordChangeSchema = z.strictObject({
  current_password: z.string(typeError('current_password', 'a string')).max(MAX_PASSWORD_LENGTH, { error: 'current_password is too long' }),
  new_password: z.string(typeError('new_password', 'a string'))
    .min(MIN_PASSWORD_LENGTH, { error: `new_password must be at least ${MIN_PASSWORD_LENGTH} characters` })
    .max(MAX_PASSWORD_LENGTH, { error: `new_password must be at most ${MAX_PASSWORD_LENGTH} characters` }),
});
export const refreshSchema = z.strictObject({
  refresh_token: z.string(typeError('refresh_token', 'a string')).max(256, { error: 'refresh_token is too long' }),
});

const name = (field: string, max: number) => z.string(typeError(field, 'a string'))
  .trim()
  .min(1, { error: `${field} must not be empty` })
  .max(max, { error: `${field} must be at most ${max} characters` })
  .regex(/^[^\p{Cc}]*$/u, { error: `${field} must not contain control characters` });

export const projectCreateSchema = z.strictObject({ name: name('name', 100) });
export const projectPatchSchema = z.strictObject({ name: name('name', 100) });

const SCOPES = ['publisher', 'subscriber'] as const;
const scopes = z.array(z.enum(SCOPES, { error: `scopes may hold only ${SCOPES.join(' and ')}` }),
  typeError('scopes', 'an array of scope names'))
  .refine((list) => new Set(list).size === list.length, { error: 'scopes must not repeat a scope' })
  .meta({ description: 'subset of ["publisher","subscriber"]', uniqueItems: true });

const allowlist = z.array(
  z.string({ error: 'ip_allowlist must hold IPv4 or IPv6 CIDR strings' })
    .refine((cidr) => parseCidr(cidr) !== undefined, { error: 'ip_allowlist must hold IPv4 or IPv6 CIDRs such as 203.0.113.0/24 or 2001:db8::/32' }),
  typeError('ip_allowlist', 'an array of CIDR strings'))
  .max(MAX_ALLOWLIST_ENTRIES, { error: `ip_allowlist may hold at most ${MAX_ALLOWLIST_ENTRIES} entries` })
  .meta({ description: 'IPv4/IPv6 CIDRs (a bare address means one host); empty: any address' });

const maxTtl = z.number(typeError('max_ttl_seconds', `an integer from 1 to ${MAX_TTL_SECONDS}`))
  .int({ error: `max_ttl_seconds must be an integer from 1 to ${MAX_TTL_SECONDS}` })
  .min(1, { error: `max_ttl_seconds must be an integer from 1 to ${MAX_TTL_SECONDS}` })
  .max(MAX_TTL_SECONDS, { error: `max_ttl_seconds must be at most ${MAX_TTL_SECONDS}` });

export const credentialCreateSchema = z.strictObject({
  name: name('name', 100).optional(),
  scopes,
  ip_allowlist: allowlist.optional(),
  max_ttl_seconds: maxTtl.optional(),
}) satisfies z.ZodType<CredentialCreate>;

export const credentialPatchSchema = z.strictObject({
  name: name('name', 100).optional(),
  scopes: scopes.optional(),
  ip_allowlist: allowlist.optional(),
  max_ttl_seconds: maxTtl.optional(),
}) satisfies z.ZodType<CredentialPatch>;
